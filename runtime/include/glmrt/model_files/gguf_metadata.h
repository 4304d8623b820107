// The metadata of a GGUF file (llama.cpp's model format): typed key/value
// pairs, read with typed accessors whose errors name the file, the key, the
// type found and the type expected.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace glmrt::gguf {

/// The value types of GGUF metadata, numbered as the format stores them.
enum class ValueType : uint32_t {
  uint8 = 0,
  int8 = 1,
  uint16 = 2,
  int16 = 3,
  uint32 = 4,
  int32 = 5,
  float32 = 6,
  boolean = 7,
  string = 8,
  array = 9,
  uint64 = 10,
  int64 = 11,
  float64 = 12,
};
inline constexpr uint32_t kValueTypeCount = 13;

/// "uint8", "float32", "string", "array", ...
std::string_view value_type_name(ValueType type);
/// Bytes one value of a fixed-size type takes in the file; 0 for string and array.
size_t value_type_bytes(ValueType type);
bool is_integer_type(ValueType type);
bool is_float_type(ValueType type);

/// An array value: numbers and bools packed as in the file (little-endian),
/// strings in one buffer with end offsets, nested arrays as Arrays. Memory
/// stays close to the bytes the file spends on it, whatever the count.
class Array {
 public:
  Array() = default;
  explicit Array(ValueType element_type) : element_type_(element_type) {}

  /// Builders (the GGUF writer, tests).
  static Array of_strings(const std::vector<std::string>& strings);
  static Array of_arrays(ValueType element_type, std::vector<Array> arrays);
  /// `count` numbers or bools of `element_type`, packed little-endian.
  static Array of_packed(ValueType element_type, uint64_t count, std::vector<std::byte> packed);
  template <typename T>
  static Array of(ValueType element_type, const std::vector<T>& values);

  ValueType element_type() const { return element_type_; }
  uint64_t size() const { return count_; }
  /// Element i of a string array.
  std::string_view string(uint64_t i) const;
  /// Element i of an array of arrays.
  const Array& array(uint64_t i) const { return arrays_.at(i); }
  /// The packed bytes of a number or bool array.
  std::span<const std::byte> packed() const { return packed_; }

  void append_string(std::string_view text);
  void append_array(Array nested);

 private:
  ValueType element_type_ = ValueType::uint8;
  uint64_t count_ = 0;
  std::vector<std::byte> packed_;
  std::string text_;
  std::vector<uint64_t> text_ends_;
  std::vector<Array> arrays_;
};

/// One metadata value.
struct Value {
  ValueType type = ValueType::uint8;
  uint64_t bits = 0;  // a number or bool: its bytes as stored, zero-extended
  std::string text;   // a string
  Array array;        // an array

  static Value u8(uint8_t v);
  static Value i8(int8_t v);
  static Value u16(uint16_t v);
  static Value i16(int16_t v);
  static Value u32(uint32_t v);
  static Value i32(int32_t v);
  static Value u64(uint64_t v);
  static Value i64(int64_t v);
  static Value f32(float v);
  static Value f64(double v);
  static Value boolean(bool v);
  static Value str(std::string v);
  static Value arr(Array v);
};

/// The key/value pairs of one GGUF file, in file order.
class Metadata {
 public:
  Metadata() = default;
  explicit Metadata(std::filesystem::path file) : file_(std::move(file)) {}

  /// Adds a pair; throws naming the file and key when the key is already there.
  void add(std::string key, Value value);

  const std::filesystem::path& file() const { return file_; }
  size_t size() const { return entries_.size(); }
  const std::vector<std::pair<std::string, Value>>& entries() const { return entries_; }
  bool contains(std::string_view key) const { return find(key) != nullptr; }
  const Value* find(std::string_view key) const;
  /// Throws "FILE has no metadata key 'KEY'" when absent.
  const Value& at(std::string_view key) const;

  /// The value of `key` as T, or a glmrt::Error naming the file, the key, the
  /// type found and the one expected. T is one of
  /// - uint8_t..uint64_t, int8_t..int64_t: any integer type whose value fits T;
  /// - float, double: float32 or float64;
  /// - bool; std::string (a copy) or std::string_view (into this Metadata);
  /// - std::vector of any of these: an array of such elements.
  template <typename T>
  T get(std::string_view key) const;
  /// As get, or nullopt when the key is absent (a wrong type still throws).
  template <typename T>
  std::optional<T> find_as(std::string_view key) const {
    if (!contains(key)) return std::nullopt;
    return get<T>(key);
  }
  template <typename T>
  T get_or(std::string_view key, T fallback) const {
    return contains(key) ? get<T>(key) : fallback;
  }
  /// An array value of any element type (nested arrays included).
  const Array& get_array(std::string_view key) const;

 private:
  std::filesystem::path file_;
  std::vector<std::pair<std::string, Value>> entries_;
  std::unordered_map<std::string, size_t> by_key_;
};

template <typename T>
Array Array::of(ValueType element_type, const std::vector<T>& values) {
  static_assert(std::is_arithmetic_v<T>, "numbers and bools only");
  std::vector<std::byte> packed(values.size() * value_type_bytes(element_type));
  const size_t each = value_type_bytes(element_type);
  for (size_t i = 0; i < values.size(); ++i) {
    // Stored as the element type (x86-64 and the file are both little-endian).
    if (element_type == ValueType::float32) {
      const float v = static_cast<float>(values[i]);
      std::memcpy(packed.data() + i * each, &v, each);
    } else if (element_type == ValueType::float64) {
      const double v = static_cast<double>(values[i]);
      std::memcpy(packed.data() + i * each, &v, each);
    } else {
      const auto v = static_cast<uint64_t>(static_cast<int64_t>(values[i]));
      std::memcpy(packed.data() + i * each, &v, each);
    }
  }
  return of_packed(element_type, values.size(), std::move(packed));
}

}  // namespace glmrt::gguf
