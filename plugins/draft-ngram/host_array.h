// A growable array of trivially copyable values in memory borrowed from the
// host's allocator, so the process memory budget sees the drafter's index.
#pragma once

#include <glmrt/plugin/host_services.h>

#include <cstddef>
#include <cstring>
#include <type_traits>
#include <utility>

namespace glmrt::draft_ngram {

template <typename T>
class HostArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  explicit HostArray(const glmrt_host_services& host) : host_(host) {}
  HostArray(const HostArray&) = delete;
  HostArray& operator=(const HostArray&) = delete;
  ~HostArray() { release(); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }
  T& back() { return data_[size_ - 1]; }

  /// False when the host refuses the memory (nothing changes then).
  bool push_back(const T& value) noexcept {
    if (size_ == capacity_ && !reserve(capacity_ ? 2 * capacity_ : 64)) return false;
    data_[size_++] = value;
    return true;
  }
  void pop_back() noexcept { --size_; }
  /// Exchanges contents with an array of the same host.
  void swap(HostArray& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
  }
  void clear() noexcept { size_ = 0; }

  /// Makes room for `count` elements, keeping the contents; false when the
  /// host refuses the memory.
  bool reserve(size_t count) noexcept {
    if (count <= capacity_) return true;
    T* grown = static_cast<T*>(host_.alloc(host_.context, count * sizeof(T), kAlignment));
    if (!grown) return false;
    if (size_) std::memcpy(static_cast<void*>(grown), data_, size_ * sizeof(T));
    release();
    data_ = grown;
    capacity_ = count;
    return true;
  }
  /// `count` elements all equal to `value` (contents replaced); false when
  /// the host refuses the memory.
  bool assign(size_t count, const T& value) noexcept {
    size_ = 0;
    if (!reserve(count)) return false;
    for (size_t i = 0; i < count; ++i) data_[i] = value;
    size_ = count;
    return true;
  }

 private:
  static constexpr size_t kAlignment = alignof(T) < 16 ? 16 : alignof(T);

  void release() noexcept {
    if (data_) host_.free(host_.context, data_);
    data_ = nullptr;
    capacity_ = 0;
  }

  const glmrt_host_services& host_;
  T* data_ = nullptr;
  size_t size_ = 0, capacity_ = 0;
};

}  // namespace glmrt::draft_ngram
