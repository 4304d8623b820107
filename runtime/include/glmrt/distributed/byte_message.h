// Messages between ranks as flat bytes: values appended in order, read back
// in the same order with every length checked, so a short or damaged
// message is an error naming what was being read, never a read past its end.
// Ranks are the same build on the same architecture (checked at start), so
// values travel in the machine's own byte order.
#pragma once

#include <glmrt/base/error.h>
#include <glmrt/distributed/mpi_world.h>

#include <cstring>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>

namespace glmrt {

class ByteWriter {
 public:
  template <typename T>
  void put(const T& value) {
    static_assert(std::is_trivially_copyable_v<T>);
    append(&value, sizeof(T));
  }
  template <typename T>
  void put_span(std::span<const T> values) {
    static_assert(std::is_trivially_copyable_v<T>);
    put<uint64_t>(values.size());
    append(values.data(), values.size_bytes());
  }
  void put_string(std::string_view text) {
    put_span(std::span<const char>(text.data(), text.size()));
  }
  Bytes take() { return std::move(bytes_); }

 private:
  void append(const void* data, size_t n) {
    const auto* p = static_cast<const std::byte*>(data);
    bytes_.insert(bytes_.end(), p, p + n);
  }
  Bytes bytes_;
};

class ByteReader {
 public:
  /// `what` names the message in errors ("rank 2's answer").
  ByteReader(std::span<const std::byte> bytes, std::string what)
      : bytes_(bytes), what_(std::move(what)) {}

  template <typename T>
  T get(std::string_view field) {
    static_assert(std::is_trivially_copyable_v<T>);
    T value;
    std::memcpy(&value, take(sizeof(T), field), sizeof(T));
    return value;
  }
  /// A counted array of at most `max` elements.
  template <typename T>
  std::vector<T> get_vector(std::string_view field, uint64_t max) {
    const uint64_t n = get<uint64_t>(field);
    if (n > max)
      fail("{}: field `{}` holds {} elements, at most {} expected", what_, field, n, max);
    std::vector<T> values(n);
    if (n) std::memcpy(values.data(), take(n * sizeof(T), field), n * sizeof(T));
    return values;
  }
  std::string get_string(std::string_view field, uint64_t max = 1 << 20) {
    const auto chars = get_vector<char>(field, max);
    return std::string(chars.begin(), chars.end());
  }
  /// Fails unless every byte was read.
  void finish() const {
    if (at_ != bytes_.size())
      fail("{}: {} bytes left over after the last field", what_, bytes_.size() - at_);
  }
  const std::string& what() const { return what_; }

 private:
  const std::byte* take(size_t n, std::string_view field) {
    if (bytes_.size() - at_ < n)
      fail("{}: message ends inside field `{}` ({} bytes left, {} needed)", what_, field,
           bytes_.size() - at_, n);
    const std::byte* p = bytes_.data() + at_;
    at_ += n;
    return p;
  }
  std::span<const std::byte> bytes_;
  std::string what_;
  size_t at_ = 0;
};

}  // namespace glmrt
