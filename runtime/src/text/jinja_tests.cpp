// Jinja2's tests (`x is defined`, `x is string`, ...) with its definitions.
#include "jinja_ops.h"
#include "jinja_text_case.h"

namespace glmrt::text::jinja {

bool apply_test(std::string_view name, const Value& v, const CallArguments& args) {
  const Value other = args.take(0, "other");
  if (name == "defined") return !v.is_undefined();
  if (name == "undefined") return v.is_undefined();
  if (name == "none") return v.is_none();
  if (name == "string") return v.is_string();
  if (name == "number") return v.is_number();
  if (name == "integer") return v.is<std::int64_t>();
  if (name == "float") return v.is<double>();
  if (name == "boolean") return v.is<bool>();
  if (name == "true") return v.is<bool>() && v.as<bool>();
  if (name == "false") return v.is<bool>() && !v.as<bool>();
  if (name == "mapping") return v.is<DictPtr>();
  if (name == "sequence") return v.is_string() || v.is<ListPtr>() || v.is<DictPtr>();
  if (name == "iterable")
    return v.is_string() || v.is<ListPtr>() || v.is<DictPtr>() || v.is_undefined();
  if (name == "callable") return v.is<CallablePtr>();
  if (name == "eq" || name == "equalto" || name == "==") return equal(v, other);
  if (name == "ne" || name == "!=") return !equal(v, other);
  if (name == "sameas") {
    if (v.is_none() || v.is<bool>() || other.is_none() || other.is<bool>())
      return equal(v, other) && v.storage().index() == other.storage().index();
    return false;
  }
  if (name == "lt" || name == "lessthan" || name == "<")
    return truthy(binary_operation("<", v, other));
  if (name == "le" || name == "<=") return truthy(binary_operation("<=", v, other));
  if (name == "gt" || name == "greaterthan" || name == ">")
    return truthy(binary_operation(">", v, other));
  if (name == "ge" || name == ">=") return truthy(binary_operation(">=", v, other));
  if (name == "in") return contains(other, v);
  if (name == "odd" || name == "even") {
    const std::int64_t i = require_integer(v, fmt::format("the value tested `{}`", name));
    return (i % 2 != 0) == (name == "odd");
  }
  if (name == "divisibleby") {
    const std::int64_t d = require_integer(other, "divisibleby's argument");
    if (d == 0) problem("integer division or modulo by zero");
    return require_integer(v, "the value tested `divisibleby`") % d == 0;
  }
  if (name == "lower" || name == "upper") {
    const MarkedText& s = require_string(v, fmt::format("the value tested `{}`", name));
    const Value changed = change_case(s, name);
    const Value other_case = change_case(s, name == "lower" ? "upper" : "lower");
    return changed.text() == s.text && other_case.text() != s.text;
  }
  problem("no test named '{}'", name);
}

}  // namespace glmrt::text::jinja
