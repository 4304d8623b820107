// Jinja2's filters as templates use them (transformers' `tojson` included).
#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "jinja_ops.h"
#include "jinja_text_case.h"

namespace glmrt::text::jinja {
namespace {

using Args = const CallArguments&;

Value tojson_filter(const Value& v, Args args) {
  JsonStyle style;
  style.ensure_ascii = truthy(args.take(0, "ensure_ascii"));
  const Value indent = args.take(1, "indent");
  if (indent.is<std::int64_t>()) {
    // One indent alone can exceed what a value may hold: refused before it is built.
    const std::int64_t width = std::max<std::int64_t>(0, indent.as<std::int64_t>());
    if (static_cast<std::uint64_t>(width) > kMaxBuiltValueBytes)
      problem("tojson: indent {} would build a value too large", width);
    style.indent = std::string(static_cast<std::size_t>(width), ' ');
  } else if (indent.is_string()) {
    style.indent = indent.text();
  } else if (!indent.is_undefined() && !indent.is_none()) {
    problem("tojson: indent must be an int or a str, not '{}'", python_type_name(indent));
  }
  if (style.indent) style.item_separator = ",";  // json.dumps' default with an indent
  const Value separators = args.take(2, "separators");
  if (separators.is<ListPtr>()) {
    const auto& pair = *separators.as<ListPtr>();
    if (pair.size() != 2) problem("tojson: separators must be an (item, key) pair");
    style.item_separator = require_string(pair[0], "tojson's item separator").text;
    style.key_separator = require_string(pair[1], "tojson's key separator").text;
  } else if (!separators.is_undefined() && !separators.is_none()) {
    problem("tojson: separators must be a tuple, not '{}'", python_type_name(separators));
  }
  style.sort_keys = truthy(args.take(3, "sort_keys"));
  MarkedText out{dump_json(v, style), {}};
  if (carries_marks(v) && !out.text.empty()) out.marks.push_back({0, out.text.size()});
  return out;
}

Value first_or_last(const Value& v, bool first) {
  if (v.is<ListPtr>()) {
    const auto& items = *v.as<ListPtr>();
    if (items.empty()) return Undefined{"first/last of an empty sequence"};
    return first ? items.front() : items.back();
  }
  std::vector<Value> items = iterate(v);
  if (items.empty()) return Undefined{"first/last of an empty sequence"};
  return first ? items.front() : items.back();
}

// An attribute path "a.b" or an index, as Jinja2's make_attrgetter reads it.
Value attribute_path(const Value& v, const Value& attribute) {
  if (attribute.is<std::int64_t>()) return get_item(v, attribute);
  const std::string& path = require_string(attribute, "the attribute").text;
  Value out = v;
  std::size_t start = 0;
  while (start <= path.size()) {
    const std::size_t dot = std::min(path.find('.', start), path.size());
    const std::string part = path.substr(start, dot - start);
    const bool digits = !part.empty() && std::all_of(part.begin(), part.end(), ::isdigit);
    out = digits ? get_item(out, std::int64_t{std::atoll(part.c_str())}) : get_item(out, part);
    if (out.is_undefined()) return out;
    start = dot + 1;
  }
  return out;
}

// The remaining arguments of select('test', ...) / map('filter', ...).
CallArguments rest_of(Args args, std::size_t from) {
  CallArguments rest;
  for (std::size_t i = from; i < args.positional.size(); ++i)
    rest.positional.push_back(args.positional[i]);
  rest.keyword = args.keyword;
  return rest;
}

Value select_filter(const Value& v, Args args, bool by_attribute, bool keep) {
  const std::size_t test_at = by_attribute ? 1 : 0;
  const Value attribute = by_attribute ? args.take(0, "attribute") : Value();
  const Value test = args.take(test_at, "test");
  const CallArguments rest = rest_of(args, test_at + 1);
  std::vector<Value> out;
  for (const Value& item : iterate(v)) {
    const Value subject = by_attribute ? attribute_path(item, attribute) : item;
    const bool passes = test.is_undefined()
                            ? truthy(subject)
                            : apply_test(require_string(test, "the test name").text, subject, rest);
    if (passes == keep) out.push_back(item);
  }
  return Value::list(std::move(out));
}

Value map_filter(const Value& v, Args args) {
  std::vector<Value> out;
  for (const auto& [k, attribute] : args.keyword)
    if (k == "attribute") {
      const Value fallback = args.take(SIZE_MAX, "default");
      for (const Value& item : iterate(v)) {
        Value x = attribute_path(item, attribute);
        out.push_back(x.is_undefined() && !fallback.is_undefined() ? fallback : x);
      }
      return Value::list(std::move(out));
    }
  const std::string filter = require_string(args.take(0, "filter"), "map's filter name").text;
  const CallArguments rest = rest_of(args, 1);
  for (const Value& item : iterate(v)) out.push_back(apply_filter(filter, item, rest));
  return Value::list(std::move(out));
}

Value sort_filter(const Value& v, Args args) {
  std::vector<Value> items = iterate(v);
  const bool reverse = truthy(args.take(0, "reverse"));
  const bool case_sensitive = truthy(args.take(1, "case_sensitive"));
  const Value attribute = args.take(2, "attribute");
  auto key = [&](const Value& item) {
    Value k = attribute.is_undefined() ? item : attribute_path(item, attribute);
    if (!case_sensitive && k.is_string()) return change_case(k.as<MarkedText>(), "lower");
    return k;
  };
  std::stable_sort(items.begin(), items.end(), [&](const Value& a, const Value& b) {
    const int c = compare_values(key(a), key(b));
    return reverse ? c > 0 : c < 0;
  });
  return Value::list(std::move(items));
}

Value items_of(const Value& v) {
  if (v.is_undefined()) return Value::list();
  if (!v.is<DictPtr>()) problem("items: expected a mapping, not '{}'", python_type_name(v));
  std::vector<Value> out;
  for (const auto& [k, item] : v.as<DictPtr>()->items) out.push_back(Value::list({Value(k), item}));
  return Value::list(std::move(out));
}

Value number_filter(const Value& v, Args args, bool to_int) {
  const Value fallback =
      args.has(0, "default") ? args.take(0, "default") : (to_int ? Value(0) : Value(0.0));
  if (v.is<std::int64_t>()) return to_int ? v : Value(static_cast<double>(v.as<std::int64_t>()));
  if (v.is<bool>()) return to_int ? Value(v.as<bool>() ? 1 : 0) : Value(v.as<bool>() ? 1.0 : 0.0);
  if (v.is<double>()) return to_int ? Value(static_cast<std::int64_t>(v.as<double>())) : v;
  if (v.is_string()) {
    const std::string& s = v.text();
    char* end = nullptr;
    if (to_int) {
      const long long i = std::strtoll(s.c_str(), &end, 10);
      if (end != s.c_str() && *end == 0) return static_cast<std::int64_t>(i);
      const double d = std::strtod(s.c_str(), &end);
      if (end != s.c_str() && *end == 0 && std::isfinite(d)) return static_cast<std::int64_t>(d);
    } else {
      const double d = std::strtod(s.c_str(), &end);
      if (end != s.c_str() && *end == 0) return d;
    }
  }
  return fallback;
}

}  // namespace

Value apply_filter(std::string_view name, const Value& v, const CallArguments& args) {
  if (name == "tojson") return tojson_filter(v, args);
  if (name == "length" || name == "count") return length_of(v);
  if (name == "string") return to_text(v);
  if (name == "safe") return v;
  if (name == "trim") {
    const Value chars = args.take(0, "chars");
    CallArguments strip_args;
    if (!chars.is_undefined()) strip_args.positional.push_back(chars);
    return string_method(to_text(v), "strip", strip_args);
  }
  if (name == "upper" || name == "lower" || name == "title" || name == "capitalize")
    return change_case(to_text(v), name);
  if (name == "default" || name == "d") {
    const bool boolean = truthy(args.take(1, "boolean"));
    if (v.is_undefined() || (boolean && !truthy(v)))
      return args.has(0, "default_value") ? args.take(0, "default_value") : Value(std::string());
    return v;
  }
  if (name == "join") {
    const Value sep = args.take(0, "d");
    const Value attribute = args.take(1, "attribute");
    MarkedText out;
    bool first = true;
    for (const Value& item : iterate(v)) {
      if (!first && !sep.is_undefined()) out.append(to_text(sep));
      first = false;
      out.append(to_text(attribute.is_undefined() ? item : attribute_path(item, attribute)));
      if (out.text.size() > kMaxBuiltValueBytes) problem("join builds a value too large");
    }
    return out;
  }
  if (name == "first") return first_or_last(v, true);
  if (name == "last") return first_or_last(v, false);
  if (name == "list") return Value::list(iterate(v));
  if (name == "reverse") {
    if (v.is_string()) return slice(v, Value(), Value(), std::int64_t{-1});
    std::vector<Value> items = iterate(v);
    std::reverse(items.begin(), items.end());
    return Value::list(std::move(items));
  }
  if (name == "items") return items_of(v);
  if (name == "dictsort") {
    Value pairs = items_of(v);
    CallArguments sort_args;
    sort_args.positional = {args.take(1, "reverse"), args.take(0, "case_sensitive"),
                            std::int64_t{0}};
    if (truthy(args.take(SIZE_MAX, "by")) && args.take(SIZE_MAX, "by").text() == "value")
      sort_args.positional[2] = std::int64_t{1};
    return sort_filter(pairs, sort_args);
  }
  if (name == "int") return number_filter(v, args, true);
  if (name == "float") return number_filter(v, args, false);
  if (name == "abs") {
    if (v.is<double>()) return std::fabs(v.as<double>());
    const std::int64_t i = require_integer(v, "abs's value");
    if (i == INT64_MIN) problem("integer overflow: the result does not fit in 64 bits");
    return i < 0 ? -i : i;
  }
  if (name == "replace") {
    return string_method(to_text(v), "replace", args);
  }
  if (name == "map") return map_filter(v, args);
  if (name == "select") return select_filter(v, args, false, true);
  if (name == "reject") return select_filter(v, args, false, false);
  if (name == "selectattr") return select_filter(v, args, true, true);
  if (name == "rejectattr") return select_filter(v, args, true, false);
  if (name == "unique") {
    std::vector<Value> out;
    for (const Value& item : iterate(v))
      if (std::none_of(out.begin(), out.end(),
                       [&](const Value& seen) { return equal(seen, item); }))
        out.push_back(item);
    return Value::list(std::move(out));
  }
  if (name == "sort") return sort_filter(v, args);
  if (name == "min" || name == "max") {
    std::vector<Value> items = iterate(v);
    if (items.empty()) return Undefined{"min/max of an empty sequence"};
    auto less = [](const Value& a, const Value& b) { return compare_values(a, b) < 0; };
    return name == "min" ? *std::min_element(items.begin(), items.end(), less)
                         : *std::max_element(items.begin(), items.end(), less);
  }
  problem("no filter named '{}'", name);
}

}  // namespace glmrt::text::jinja
