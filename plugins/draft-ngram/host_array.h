// A growable array of trivially copyable values in a HostBuffer, so the
// process memory budget sees the drafter's index.
#pragma once

#include <host_buffer.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

namespace glmrt::draft_ngram {

template <typename T>
class HostArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  explicit HostArray(const glmrt_host_services& host) : host_(host), buffer_(host) {}

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data()[i]; }
  const T& operator[](size_t i) const { return data()[i]; }
  T& back() { return data()[size_ - 1]; }

  /// False when the host refuses the memory (nothing changes then).
  bool push_back(const T& value) noexcept {
    if (size_ == capacity_ && !reserve(capacity_ ? 2 * capacity_ : 64)) return false;
    data()[size_++] = value;
    return true;
  }
  void pop_back() noexcept { --size_; }
  /// Exchanges contents with an array of the same host.
  void swap(HostArray& other) noexcept {
    buffer_.swap(other.buffer_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
  }
  void clear() noexcept { size_ = 0; }

  /// Makes room for `count` elements, keeping the contents; false when the
  /// host refuses the memory.
  bool reserve(size_t count) noexcept {
    if (count <= capacity_) return true;
    if (count > SIZE_MAX / sizeof(T)) return false;
    plugin_support::HostBuffer grown(host_);
    if (!grown.reserve(count * sizeof(T))) return false;
    if (size_) std::memcpy(grown.data(), buffer_.data(), size_ * sizeof(T));
    buffer_.swap(grown);
    capacity_ = count;
    return true;
  }
  /// `count` elements all equal to `value` (contents replaced); false when
  /// the host refuses the memory.
  bool assign(size_t count, const T& value) noexcept {
    size_ = 0;
    if (!reserve(count)) return false;
    for (size_t i = 0; i < count; ++i) data()[i] = value;
    size_ = count;
    return true;
  }

 private:
  T* data() const noexcept { return buffer_.as<T>(); }

  const glmrt_host_services& host_;
  plugin_support::HostBuffer buffer_;
  size_t size_ = 0, capacity_ = 0;
};

}  // namespace glmrt::draft_ngram
