#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/model_files/gguf_metadata.h>

#include <array>
#include <cstring>
#include <utility>

namespace glmrt::gguf {

namespace {

// A stored integer: signed types sign-extended, unsigned ones as they are.
struct StoredInteger {
  bool is_signed;
  uint64_t bits;
};

StoredInteger integer_from_bytes(ValueType type, const std::byte* bytes) {
  uint64_t raw = 0;
  std::memcpy(&raw, bytes, value_type_bytes(type));  // little-endian, as the file
  switch (type) {
    case ValueType::int8:
      return {true, static_cast<uint64_t>(static_cast<int64_t>(static_cast<int8_t>(raw)))};
    case ValueType::int16:
      return {true, static_cast<uint64_t>(static_cast<int64_t>(static_cast<int16_t>(raw)))};
    case ValueType::int32:
      return {true, static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(raw)))};
    case ValueType::int64:
      return {true, raw};
    default:
      return {false, raw};
  }
}

template <typename T>
std::optional<T> integer_as(StoredInteger v) {
  if (v.is_signed) {
    const auto value = static_cast<int64_t>(v.bits);
    if (!std::in_range<T>(value)) return std::nullopt;
    return static_cast<T>(value);
  }
  if (!std::in_range<T>(v.bits)) return std::nullopt;
  return static_cast<T>(v.bits);
}

std::string integer_text(StoredInteger v) {
  return v.is_signed ? std::to_string(static_cast<int64_t>(v.bits)) : std::to_string(v.bits);
}

double float_from_bytes(ValueType type, const std::byte* bytes) {
  if (type == ValueType::float32) {
    float v;
    std::memcpy(&v, bytes, sizeof v);
    return v;
  }
  double v;
  std::memcpy(&v, bytes, sizeof v);
  return v;
}

template <typename T>
struct Expected;
#define GLMRT_GGUF_EXPECTED(T, text)               \
  template <>                                      \
  struct Expected<T> {                             \
    static constexpr std::string_view name = text; \
  };
GLMRT_GGUF_EXPECTED(uint8_t, "an integer that fits uint8 (0..255)")
GLMRT_GGUF_EXPECTED(uint16_t, "an integer that fits uint16 (0..65535)")
GLMRT_GGUF_EXPECTED(uint32_t, "an integer that fits uint32 (0..4294967295)")
GLMRT_GGUF_EXPECTED(uint64_t, "a non-negative integer")
GLMRT_GGUF_EXPECTED(int8_t, "an integer that fits int8 (-128..127)")
GLMRT_GGUF_EXPECTED(int16_t, "an integer that fits int16 (-32768..32767)")
GLMRT_GGUF_EXPECTED(int32_t, "an integer that fits int32")
GLMRT_GGUF_EXPECTED(int64_t, "an integer that fits int64")
GLMRT_GGUF_EXPECTED(float, "a float32 or float64")
GLMRT_GGUF_EXPECTED(double, "a float32 or float64")
GLMRT_GGUF_EXPECTED(bool, "a bool")
GLMRT_GGUF_EXPECTED(std::string, "a string")
GLMRT_GGUF_EXPECTED(std::string_view, "a string")
#undef GLMRT_GGUF_EXPECTED

// One element (or a scalar's bytes) as T; `describe` names it for errors.
template <typename T>
T element_as(ValueType type, const std::byte* bytes, const auto& describe) {
  if constexpr (std::is_same_v<T, bool>) {
    if (type != ValueType::boolean)
      fail("{} is {}, expected {}", describe(), value_type_name(type), Expected<T>::name);
    return std::to_integer<uint8_t>(bytes[0]) != 0;
  } else if constexpr (std::is_floating_point_v<T>) {
    if (!is_float_type(type))
      fail("{} is {}, expected {}", describe(), value_type_name(type), Expected<T>::name);
    return static_cast<T>(float_from_bytes(type, bytes));
  } else {
    if (!is_integer_type(type))
      fail("{} is {}, expected {}", describe(), value_type_name(type), Expected<T>::name);
    const StoredInteger stored = integer_from_bytes(type, bytes);
    const std::optional<T> value = integer_as<T>(stored);
    if (!value)
      fail("{} is {} {}, expected {}", describe(), value_type_name(type), integer_text(stored),
           Expected<T>::name);
    return *value;
  }
}

template <typename T>
struct IsVector : std::false_type {};
template <typename E>
struct IsVector<std::vector<E>> : std::true_type {
  using Element = E;
};

}  // namespace

std::string_view value_type_name(ValueType type) {
  static constexpr std::array<std::string_view, kValueTypeCount> kNames = {
      "uint8", "int8",   "uint16", "int16",  "uint32", "int32",  "float32",
      "bool",  "string", "array",  "uint64", "int64",  "float64"};
  const auto index = static_cast<uint32_t>(type);
  return index < kNames.size() ? kNames[index] : "an unknown type";
}

size_t value_type_bytes(ValueType type) {
  switch (type) {
    case ValueType::uint8:
    case ValueType::int8:
    case ValueType::boolean:
      return 1;
    case ValueType::uint16:
    case ValueType::int16:
      return 2;
    case ValueType::uint32:
    case ValueType::int32:
    case ValueType::float32:
      return 4;
    case ValueType::uint64:
    case ValueType::int64:
    case ValueType::float64:
      return 8;
    default:
      return 0;
  }
}

bool is_integer_type(ValueType type) {
  return value_type_bytes(type) > 0 && !is_float_type(type) && type != ValueType::boolean;
}

bool is_float_type(ValueType type) {
  return type == ValueType::float32 || type == ValueType::float64;
}

Array Array::of_strings(const std::vector<std::string>& strings) {
  Array out(ValueType::string);
  for (const auto& s : strings) out.append_string(s);
  return out;
}

Array Array::of_arrays(ValueType element_type, std::vector<Array> arrays) {
  Array out(ValueType::array);
  for (auto& a : arrays) {
    if (a.element_type() != element_type)
      fail("GGUF array of {} arrays given an array of {}", value_type_name(element_type),
           value_type_name(a.element_type()));
    out.append_array(std::move(a));
  }
  return out;
}

Array Array::of_packed(ValueType element_type, uint64_t count, std::vector<std::byte> packed) {
  if (value_type_bytes(element_type) == 0 ||
      packed.size() != count * value_type_bytes(element_type))
    fail("GGUF array of {} {}: {} packed bytes do not match", count, value_type_name(element_type),
         packed.size());
  Array out(element_type);
  out.count_ = count;
  out.packed_ = std::move(packed);
  return out;
}

std::string_view Array::string(uint64_t i) const {
  const uint64_t begin = i == 0 ? 0 : text_ends_.at(i - 1);
  return std::string_view(text_).substr(begin, text_ends_.at(i) - begin);
}

void Array::append_string(std::string_view text) {
  text_ += text;
  text_ends_.push_back(text_.size());
  ++count_;
}

void Array::append_array(Array nested) {
  arrays_.push_back(std::move(nested));
  ++count_;
}

namespace {
Value scalar(ValueType type, uint64_t bits) {
  Value v;
  v.type = type;
  v.bits = bits;
  return v;
}
}  // namespace

Value Value::u8(uint8_t v) {
  return scalar(ValueType::uint8, v);
}
Value Value::i8(int8_t v) {
  return scalar(ValueType::int8, static_cast<uint8_t>(v));
}
Value Value::u16(uint16_t v) {
  return scalar(ValueType::uint16, v);
}
Value Value::i16(int16_t v) {
  return scalar(ValueType::int16, static_cast<uint16_t>(v));
}
Value Value::u32(uint32_t v) {
  return scalar(ValueType::uint32, v);
}
Value Value::i32(int32_t v) {
  return scalar(ValueType::int32, static_cast<uint32_t>(v));
}
Value Value::u64(uint64_t v) {
  return scalar(ValueType::uint64, v);
}
Value Value::i64(int64_t v) {
  return scalar(ValueType::int64, static_cast<uint64_t>(v));
}
Value Value::f32(float v) {
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return scalar(ValueType::float32, bits);
}
Value Value::f64(double v) {
  uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return scalar(ValueType::float64, bits);
}
Value Value::boolean(bool v) {
  return scalar(ValueType::boolean, v ? 1 : 0);
}
Value Value::str(std::string v) {
  Value out;
  out.type = ValueType::string;
  out.text = std::move(v);
  return out;
}
Value Value::arr(Array v) {
  Value out;
  out.type = ValueType::array;
  out.array = std::move(v);
  return out;
}

void Metadata::add(std::string key, Value value) {
  if (by_key_.contains(key))
    fail("{}: metadata key '{}' appears twice", file_, printable(key, 200));
  by_key_.emplace(key, entries_.size());
  entries_.emplace_back(std::move(key), std::move(value));
}

const Value* Metadata::find(std::string_view key) const {
  const auto it = by_key_.find(std::string(key));
  return it == by_key_.end() ? nullptr : &entries_[it->second].second;
}

const Value& Metadata::at(std::string_view key) const {
  const Value* value = find(key);
  if (value == nullptr) fail("{} has no metadata key '{}'", file_, printable(key, 200));
  return *value;
}

const Array& Metadata::get_array(std::string_view key) const {
  const Value& value = at(key);
  if (value.type != ValueType::array)
    fail("{}: metadata key '{}' is {}, expected an array", file_, key, value_type_name(value.type));
  return value.array;
}

template <typename T>
T Metadata::get(std::string_view key) const {
  const Value& value = at(key);
  const auto describe = [&] { return fmt::format("{}: metadata key '{}'", file_, key); };
  if constexpr (IsVector<T>::value) {
    using E = typename IsVector<T>::Element;
    if (value.type != ValueType::array)
      fail("{} is {}, expected an array of {}", describe(), value_type_name(value.type),
           Expected<E>::name);
    const Array& array = value.array;
    T out;
    out.reserve(array.size());
    if constexpr (std::is_same_v<E, std::string> || std::is_same_v<E, std::string_view>) {
      if (array.element_type() != ValueType::string)
        fail("{} is an array of {}, expected an array of strings", describe(),
             value_type_name(array.element_type()));
      for (uint64_t i = 0; i < array.size(); ++i) out.emplace_back(array.string(i));
    } else {
      const ValueType type = array.element_type();
      if (value_type_bytes(type) == 0)
        fail("{} is an array of {}, expected an array of {}", describe(), value_type_name(type),
             Expected<E>::name);
      const size_t each = value_type_bytes(type);
      for (uint64_t i = 0; i < array.size(); ++i) {
        const auto element = [&] { return fmt::format("{}, element {},", describe(), i); };
        out.push_back(element_as<E>(type, array.packed().data() + i * each, element));
      }
    }
    return out;
  } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, std::string_view>) {
    if (value.type != ValueType::string)
      fail("{} is {}, expected a string", describe(), value_type_name(value.type));
    return T(value.text);
  } else {
    if (value_type_bytes(value.type) == 0)
      fail("{} is {}, expected {}", describe(), value_type_name(value.type), Expected<T>::name);
    std::array<std::byte, 8> bytes{};
    std::memcpy(bytes.data(), &value.bits, sizeof value.bits);
    return element_as<T>(value.type, bytes.data(), describe);
  }
}

#define GLMRT_GGUF_GET(T)                              \
  template T Metadata::get<T>(std::string_view) const; \
  template std::vector<T> Metadata::get<std::vector<T>>(std::string_view) const;
GLMRT_GGUF_GET(uint8_t)
GLMRT_GGUF_GET(uint16_t)
GLMRT_GGUF_GET(uint32_t)
GLMRT_GGUF_GET(uint64_t)
GLMRT_GGUF_GET(int8_t)
GLMRT_GGUF_GET(int16_t)
GLMRT_GGUF_GET(int32_t)
GLMRT_GGUF_GET(int64_t)
GLMRT_GGUF_GET(float)
GLMRT_GGUF_GET(double)
GLMRT_GGUF_GET(bool)
GLMRT_GGUF_GET(std::string)
GLMRT_GGUF_GET(std::string_view)
#undef GLMRT_GGUF_GET

}  // namespace glmrt::gguf
