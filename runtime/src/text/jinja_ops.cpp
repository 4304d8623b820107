#include "jinja_ops.h"

#include <cmath>

namespace glmrt::text::jinja {
namespace {

bool is_int_like(const Value& v) {
  return v.is<std::int64_t>() || v.is<bool>();
}

std::int64_t int_of(const Value& v) {
  return v.is<bool>() ? (v.as<bool>() ? 1 : 0) : v.as<std::int64_t>();
}

double float_of(const Value& v) {
  return v.is<double>() ? v.as<double>() : static_cast<double>(int_of(v));
}

[[noreturn]] void unsupported(std::string_view op, const Value& a, const Value& b) {
  if (a.is_undefined() || b.is_undefined())
    problem("'{}' is undefined",
            a.is_undefined() ? a.as<Undefined>().name : b.as<Undefined>().name);
  problem("unsupported operand type(s) for {}: '{}' and '{}'", op, python_type_name(a),
          python_type_name(b));
}

// Python's ints are unbounded, glmrt's 64-bit: a result that does not fit is
// an error, never a wrapped (or undefined) value.
[[noreturn]] void integer_overflow() {
  problem("integer overflow: the result does not fit in 64 bits");
}

std::int64_t checked_power(std::int64_t base, std::int64_t exponent) {
  std::int64_t result = 1;
  while (exponent > 0) {
    if ((exponent & 1) && __builtin_mul_overflow(result, base, &result)) integer_overflow();
    exponent >>= 1;
    if (exponent > 0 && __builtin_mul_overflow(base, base, &base)) integer_overflow();
  }
  return result;
}

void require_size(std::size_t bytes) {
  if (bytes > kMaxBuiltValueBytes)
    problem("the value would exceed {} MiB (the bound on a value a template builds)",
            kMaxBuiltValueBytes >> 20);
}

Value repeat(const Value& sequence, std::int64_t times) {
  if (times <= 0) return sequence.is_string() ? Value(std::string()) : Value::list();
  const std::size_t unit = sequence.is_string() ? sequence.text().size()
                                                : sequence.as<ListPtr>()->size() * sizeof(Value);
  if (unit > 0 && static_cast<std::uint64_t>(times) > kMaxBuiltValueBytes / unit)
    require_size(kMaxBuiltValueBytes + 1);
  if (sequence.is_string()) {
    const MarkedText& s = sequence.as<MarkedText>();
    require_size(s.text.size() * static_cast<std::size_t>(times));
    MarkedText out;
    for (std::int64_t i = 0; i < times; ++i) out.append(s);
    return out;
  }
  const auto& items = *sequence.as<ListPtr>();
  require_size(items.size() * static_cast<std::size_t>(times) * sizeof(Value));
  std::vector<Value> out;
  for (std::int64_t i = 0; i < times; ++i) out.insert(out.end(), items.begin(), items.end());
  return Value::list(std::move(out));
}

Value arithmetic(std::string_view op, const Value& a, const Value& b) {
  if (is_int_like(a) && is_int_like(b)) {
    const std::int64_t x = int_of(a), y = int_of(b);
    std::int64_t r = 0;
    if (op == "+") {
      if (__builtin_add_overflow(x, y, &r)) integer_overflow();
      return r;
    }
    if (op == "-") {
      if (__builtin_sub_overflow(x, y, &r)) integer_overflow();
      return r;
    }
    if (op == "*") {
      if (__builtin_mul_overflow(x, y, &r)) integer_overflow();
      return r;
    }
    if (op == "/") {
      if (y == 0) problem("division by zero");
      return static_cast<double>(x) / static_cast<double>(y);
    }
    if (op == "//" || op == "%") {
      if (y == 0) problem("integer division or modulo by zero");
      if (x == INT64_MIN && y == -1) {
        if (op == "%") return std::int64_t{0};
        integer_overflow();
      }
      std::int64_t q = x / y, m = x % y;
      if (m != 0 && ((m < 0) != (y < 0))) --q, m += y;  // Python floors
      return op == "//" ? Value(q) : Value(m);
    }
    if (op == "**") {
      if (y < 0) return std::pow(static_cast<double>(x), static_cast<double>(y));
      return checked_power(x, y);
    }
  }
  const double x = float_of(a), y = float_of(b);
  if (op == "+") return x + y;
  if (op == "-") return x - y;
  if (op == "*") return x * y;
  if (op == "**") return std::pow(x, y);
  if (y == 0) problem("float division by zero");
  if (op == "/") return x / y;
  if (op == "//") return std::floor(x / y);
  return x - std::floor(x / y) * y;
}

}  // namespace

Value binary_operation(std::string_view op, const Value& a, const Value& b) {
  if (op == "==") return equal(a, b);
  if (op == "!=") return !equal(a, b);
  if (op == "<" || op == "<=" || op == ">" || op == ">=") {
    const bool comparable = (a.is_number() && b.is_number()) || (a.is_string() && b.is_string());
    if (!comparable)
      problem("'{}' not supported between instances of '{}' and '{}'", op, python_type_name(a),
              python_type_name(b));
    const int c = compare_values(a, b);
    if (op == "<") return c < 0;
    if (op == "<=") return c <= 0;
    if (op == ">") return c > 0;
    return c >= 0;
  }
  if (op == "~") {
    MarkedText out = to_text(a);
    const MarkedText right = to_text(b);
    require_size(out.text.size() + right.text.size());
    out.append(right);
    return out;
  }
  if (op == "+") {
    if (a.is_string() && b.is_string()) {
      MarkedText out = a.as<MarkedText>();
      require_size(out.text.size() + b.text().size());
      out.append(b.as<MarkedText>());
      return out;
    }
    if (a.is<ListPtr>() && b.is<ListPtr>()) {
      std::vector<Value> out = *a.as<ListPtr>();
      const auto& right = *b.as<ListPtr>();
      require_size((out.size() + right.size()) * sizeof(Value));
      out.insert(out.end(), right.begin(), right.end());
      return Value::list(std::move(out));
    }
    if (a.is_string() && !b.is_undefined())
      problem("can only concatenate str (not \"{}\") to str", python_type_name(b));
    if (a.is<ListPtr>() && !b.is_undefined())
      problem("can only concatenate list (not \"{}\") to list", python_type_name(b));
  }
  if (op == "*") {
    if ((a.is_string() || a.is<ListPtr>()) && is_int_like(b)) return repeat(a, int_of(b));
    if ((b.is_string() || b.is<ListPtr>()) && is_int_like(a)) return repeat(b, int_of(a));
  }
  if (op == "%" && a.is_string()) problem("`%` string formatting is not supported");
  if (a.is_number() && b.is_number()) return arithmetic(op, a, b);
  unsupported(op, a, b);
}

Value negate(const Value& a) {
  if (a.is<double>()) return -a.as<double>();
  if (is_int_like(a)) {
    if (int_of(a) == INT64_MIN) integer_overflow();
    return -int_of(a);
  }
  if (a.is_undefined()) problem("'{}' is undefined", a.as<Undefined>().name);
  problem("bad operand type for unary -: '{}'", python_type_name(a));
}

int compare_values(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (is_int_like(a) && is_int_like(b)) return int_of(a) < int_of(b) ? -1 : int_of(a) > int_of(b);
    const double x = float_of(a), y = float_of(b);
    return x < y ? -1 : x > y;
  }
  if (a.is_string() && b.is_string()) {
    const int c = a.text().compare(b.text());  // UTF-8 byte order is code point order
    return c < 0 ? -1 : c > 0;
  }
  problem("'<' not supported between instances of '{}' and '{}'", python_type_name(a),
          python_type_name(b));
}

bool contains(const Value& container, const Value& item) {
  if (container.is_string()) {
    if (!item.is_string())
      problem("'in <string>' requires string as left operand, not {}", python_type_name(item));
    return container.text().find(item.text()) != std::string::npos;
  }
  if (container.is<ListPtr>()) {
    for (const Value& v : *container.as<ListPtr>())
      if (equal(v, item)) return true;
    return false;
  }
  if (container.is<DictPtr>())
    return item.is_string() && container.as<DictPtr>()->find(item.text());
  if (container.is_undefined()) return false;  // iterating Undefined yields nothing
  problem("argument of type '{}' is not iterable", python_type_name(container));
}

Value get_attribute(const Value& obj, std::string_view name) {
  if (obj.is_undefined()) problem("'{}' is undefined", obj.as<Undefined>().name);
  if (obj.is<NamespacePtr>()) {
    if (const Value* v = obj.as<NamespacePtr>()->attributes.find(name)) return *v;
  } else if (std::optional<Value> method = method_of(obj, name)) {
    return *method;
  } else if (obj.is<DictPtr>()) {
    if (const Value* v = obj.as<DictPtr>()->find(name)) return *v;
  }
  if (obj.is_none()) return Undefined{fmt::format("None.{}", name)};
  return Undefined{std::string(name)};
}

namespace {

// Python's index normalisation: nullopt when out of range.
std::optional<std::size_t> normalized_index(std::int64_t index, std::size_t size) {
  const auto n = static_cast<std::int64_t>(size);
  if (index < 0) index += n;
  if (index < 0 || index >= n) return std::nullopt;
  return static_cast<std::size_t>(index);
}

}  // namespace

Value get_item(const Value& obj, const Value& key) {
  if (obj.is_undefined()) problem("'{}' is undefined", obj.as<Undefined>().name);
  if (obj.is<DictPtr>() && key.is_string()) {
    if (const Value* v = obj.as<DictPtr>()->find(key.text())) return *v;
  }
  if (obj.is<ListPtr>() && is_int_like(key)) {
    const auto& items = *obj.as<ListPtr>();
    if (auto i = normalized_index(int_of(key), items.size())) return items[*i];
    return Undefined{"[index]"};
  }
  if (obj.is_string() && is_int_like(key)) {
    const MarkedText& s = obj.as<MarkedText>();
    const std::vector<std::size_t> offsets = code_point_offsets(s.text);
    if (auto i = normalized_index(int_of(key), offsets.size() - 1))
      return s.slice(offsets[*i], offsets[*i + 1]);
    return Undefined{"[index]"};
  }
  if (key.is_string()) return get_attribute(obj, key.text());
  return Undefined{"[item]"};
}

Value slice(const Value& obj, const Value& start_v, const Value& stop_v, const Value& step_v) {
  auto bound = [](const Value& v, std::string_view what) -> std::optional<std::int64_t> {
    if (v.is_undefined() || v.is_none()) return std::nullopt;
    return require_integer(v, what);
  };
  const std::int64_t step = bound(step_v, "a slice step").value_or(1);
  if (step == 0) problem("slice step cannot be zero");
  std::vector<std::size_t> offsets;
  std::int64_t n = 0;
  if (obj.is_string()) {
    offsets = code_point_offsets(obj.text());
    n = static_cast<std::int64_t>(offsets.size()) - 1;
  } else if (obj.is<ListPtr>()) {
    n = static_cast<std::int64_t>(obj.as<ListPtr>()->size());
  } else {
    problem("'{}' object is not subscriptable", python_type_name(obj));
  }
  auto clamp = [&](std::optional<std::int64_t> v, std::int64_t fallback) {
    if (!v) return fallback;
    std::int64_t i = *v < 0 ? *v + n : *v;
    if (step > 0) return std::clamp<std::int64_t>(i, 0, n);
    return std::clamp<std::int64_t>(i, -1, n - 1);
  };
  const std::int64_t start = clamp(bound(start_v, "a slice start"), step > 0 ? 0 : n - 1);
  const std::int64_t stop = clamp(bound(stop_v, "a slice stop"), step > 0 ? n : -1);
  if (obj.is_string() && step == 1) {
    const MarkedText& s = obj.as<MarkedText>();
    if (start >= stop) return std::string();
    return s.slice(offsets[start], offsets[stop]);
  }
  if (obj.is_string()) {
    const MarkedText& s = obj.as<MarkedText>();
    MarkedText out;
    for (__int128 i = start; step > 0 ? i < stop : i > stop; i += step) {
      const auto at = static_cast<std::size_t>(i);
      out.append(s.slice(offsets[at], offsets[at + 1]));
    }
    return out;
  }
  const auto& items = *obj.as<ListPtr>();
  std::vector<Value> out;
  for (__int128 i = start; step > 0 ? i < stop : i > stop; i += step)
    out.push_back(items[static_cast<std::size_t>(i)]);
  return Value::list(std::move(out));
}

std::vector<Value> iterate(const Value& value) {
  if (value.is<ListPtr>()) return *value.as<ListPtr>();
  if (value.is<DictPtr>()) {
    std::vector<Value> keys;
    for (const auto& [k, v] : value.as<DictPtr>()->items) keys.emplace_back(k);
    return keys;
  }
  if (value.is_string()) {
    const MarkedText& s = value.as<MarkedText>();
    const std::vector<std::size_t> offsets = code_point_offsets(s.text);
    std::vector<Value> chars;
    for (std::size_t i = 0; i + 1 < offsets.size(); ++i)
      chars.emplace_back(s.slice(offsets[i], offsets[i + 1]));
    return chars;
  }
  if (value.is_undefined()) return {};
  problem("'{}' object is not iterable", python_type_name(value));
}

std::int64_t length_of(const Value& value) {
  if (value.is_string())
    return static_cast<std::int64_t>(code_point_offsets(value.text()).size()) - 1;
  if (value.is<ListPtr>()) return static_cast<std::int64_t>(value.as<ListPtr>()->size());
  if (value.is<DictPtr>()) return static_cast<std::int64_t>(value.as<DictPtr>()->items.size());
  if (value.is_undefined()) return 0;
  problem("object of type '{}' has no len()", python_type_name(value));
}

const MarkedText& require_string(const Value& value, std::string_view what) {
  if (!value.is_string()) problem("{} must be a str, not '{}'", what, python_type_name(value));
  return value.as<MarkedText>();
}

std::int64_t require_integer(const Value& value, std::string_view what) {
  if (!is_int_like(value))
    problem("{} must be an integer, not '{}'", what, python_type_name(value));
  return int_of(value);
}

}  // namespace glmrt::text::jinja
