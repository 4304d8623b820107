// What Jinja2 expressions do to values, with Python's semantics: operators,
// `in`, attribute and item access, slices, iteration, methods, filters and
// tests. A failure is a Problem (Python's TypeError and the like); the
// evaluator adds the template, line and construct.
#pragma once

#include <fmt/format.h>

#include <optional>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "jinja_value.h"

namespace glmrt::text::jinja {

struct Problem : std::runtime_error {
  using std::runtime_error::runtime_error;
};

template <typename... Args>
[[noreturn]] void problem(fmt::format_string<Args...> format, Args&&... args) {
  throw Problem(fmt::format(format, std::forward<Args>(args)...));
}

// The largest str or list an expression may build (a hostile template
// doubling a string in a loop is stopped, not allowed to fill the memory).
constexpr std::size_t kMaxBuiltValueBytes = std::size_t{64} << 20;

// + - * / // % ** ~ == != < <= > >=
Value binary_operation(std::string_view op, const Value& a, const Value& b);
Value negate(const Value& a);
// `item in container`.
bool contains(const Value& container, const Value& item);
// `obj.name`: a method bound to obj, a dict's key or a namespace's
// attribute; Undefined when absent. Undefined obj is an error.
Value get_attribute(const Value& obj, std::string_view name);
// `obj[key]`: item first, then attribute; Undefined when absent.
Value get_item(const Value& obj, const Value& key);
Value slice(const Value& obj, const Value& start, const Value& stop, const Value& step);
// The items a for loop or a filter walks: list items, dict keys, the code
// points of a str; Undefined is empty; anything else is an error.
std::vector<Value> iterate(const Value& value);
// Python's len().
std::int64_t length_of(const Value& value);
// A str as Python would hold it for an operation: its text, or an error
// naming `what` when it is not a str.
const MarkedText& require_string(const Value& value, std::string_view what);
std::int64_t require_integer(const Value& value, std::string_view what);
// str.`name`(args) for the str methods method_of binds.
Value string_method(const MarkedText& s, std::string_view name, const CallArguments& args);
// The bound method `name` of a str, dict or list; nullopt when none.
std::optional<Value> method_of(const Value& receiver, std::string_view name);

Value apply_filter(std::string_view name, const Value& value, const CallArguments& args);
bool apply_test(std::string_view name, const Value& value, const CallArguments& args);

// json.dumps(value, ensure_ascii, indent, separators, sort_keys) as
// transformers' `tojson` calls it.
struct JsonStyle {
  bool ensure_ascii = false;
  std::optional<std::string> indent;  // nullopt: one line
  std::string item_separator = ", ";
  std::string key_separator = ": ";
  bool sort_keys = false;
};
std::string dump_json(const Value& value, const JsonStyle& style);

// Python's total order for sort(): numbers, then strs; -1, 0 or 1.
int compare_values(const Value& a, const Value& b);

}  // namespace glmrt::text::jinja
