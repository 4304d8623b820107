// The values a Jinja template computes with, as Python holds them under
// Jinja2: Undefined, None, bool, int, float, str, list, dict, namespace and
// callables (macros, bound methods, globals). Strings carry the byte ranges
// that came from the request (messages, tools), so the prompt can mark the
// request's own text as plain text (chat_template.h, RenderedChat).
#pragma once

#include <glmrt/text/tokenizer.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace glmrt::text::jinja {

class Value;

// A str and which of its bytes are the request's own text (sorted, disjoint).
struct MarkedText {
  std::string text;
  std::vector<ByteRange> marks;

  void append(const MarkedText& other);
  void append(std::string_view plain) { text += plain; }
  // Bytes [begin, end) with the marks that fall inside them.
  MarkedText slice(std::size_t begin, std::size_t end) const;
  bool has_marks() const { return !marks.empty(); }
  // Every byte marked when any was (for transforms such as upper()).
  void mark_all_if_any();
};

struct Undefined {
  std::string name;  // what was looked up, for messages
};
struct None {};

struct Dict {
  std::vector<std::pair<std::string, Value>> items;
  const Value* find(std::string_view key) const;
  Value* find(std::string_view key);
  void set(std::string_view key, Value value);
};
struct Namespace {
  Dict attributes;
};

struct CallArguments;
class Evaluator;
using Function = std::function<Value(Evaluator&, CallArguments&)>;
struct Callable;

using ListPtr = std::shared_ptr<std::vector<Value>>;
using DictPtr = std::shared_ptr<Dict>;
using NamespacePtr = std::shared_ptr<Namespace>;
using CallablePtr = std::shared_ptr<Callable>;

class Value {
 public:
  using Storage = std::variant<Undefined, None, bool, std::int64_t, double, MarkedText, ListPtr,
                               DictPtr, NamespacePtr, CallablePtr>;
  Value() : storage_(Undefined{}) {}
  template <typename T>
  requires std::is_constructible_v<Storage, T&&> Value(T&& v)
      : storage_(std::forward<T>(v)) {}  // NOLINT: implicit by design
  Value(int v) : storage_(std::int64_t{v}) {}
  Value(std::string v) : storage_(MarkedText{std::move(v), {}}) {}
  Value(const char* v) : storage_(MarkedText{v, {}}) {}

  static Value list(std::vector<Value> items = {}) {
    return std::make_shared<std::vector<Value>>(std::move(items));
  }
  static Value dict(Dict d = {}) { return std::make_shared<Dict>(std::move(d)); }

  template <typename T>
  bool is() const {
    return std::holds_alternative<T>(storage_);
  }
  template <typename T>
  const T& as() const {
    return std::get<T>(storage_);
  }
  template <typename T>
  T& as() {
    return std::get<T>(storage_);
  }
  bool is_undefined() const { return is<Undefined>(); }
  bool is_none() const { return is<None>(); }
  bool is_string() const { return is<MarkedText>(); }
  bool is_number() const { return is<std::int64_t>() || is<double>() || is<bool>(); }
  const std::string& text() const { return as<MarkedText>().text; }
  const Storage& storage() const { return storage_; }

 private:
  Storage storage_;
};

struct CallArguments {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
  // The argument at `index` or named `name`; Undefined when not given.
  Value take(std::size_t index, std::string_view name) const;
  bool has(std::size_t index, std::string_view name) const;
};

struct Callable {
  std::string name;
  Function function;
  /// What the function holds strongly (a bound method's list or dict), for
  /// holds(): nothing else a callable captures can reach a container.
  Value bound = {};
};

// Whether `value` holds `container` (a list, dict or namespace) at any
// depth. Storing such a value into that container would make a reference
// cycle, which shared ownership never frees: the template is refused instead.
bool holds(const Value& value, const void* container);

// Python's type name, as its error messages say it ("str", "NoneType", ...).
std::string python_type_name(const Value& value);
// Python truthiness (Undefined is false).
bool truthy(const Value& value);
// str(value) as `{{ value }}` prints it: Undefined empty, None "None",
// floats as repr, containers as repr; strings keep their marks.
MarkedText to_text(const Value& value);
// Python ==.
bool equal(const Value& a, const Value& b);
// The request's JSON as template values; every string marked when `marked`,
// but for the values of `role` keys.
Value from_json(const nlohmann::ordered_json& json, bool marked);
// Whether any string inside `value` is marked.
bool carries_marks(const Value& value);

// Code points of a str: byte offsets of each (plus the end).
std::vector<std::size_t> code_point_offsets(std::string_view text);

}  // namespace glmrt::text::jinja
