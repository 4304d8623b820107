// Helpers for the model_files tests: safetensors files assembled byte by
// byte, and error-message assertions.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

#include "temp_folder.h"

namespace glmrt::test {

void write_file(const std::filesystem::path& file, std::string_view bytes);
std::string read_file(const std::filesystem::path& file);

/// 8-byte little-endian length + header text + data, with no validation, so
/// tests can build any corrupt file.
std::string safetensors_bytes(std::string_view header_json, std::string_view data);

struct TensorSpec {
  std::string name;
  std::string dtype;
  std::vector<int64_t> shape;
  std::string data;  // raw little-endian bytes
};

/// A well-formed safetensors file holding `tensors` back to back.
std::string safetensors_file(const std::vector<TensorSpec>& tensors);

/// Raw bytes of little-endian values.
template <typename T>
std::string bytes_of(std::initializer_list<T> values) {
  std::string out(values.size() * sizeof(T), '\0');
  size_t at = 0;
  for (const T& v : values) {
    std::memcpy(out.data() + at, &v, sizeof(T));
    at += sizeof(T);
  }
  return out;
}

/// Runs `action`, expecting glmrt::Error whose message contains every one of
/// `needles`; reports the message otherwise.
void expect_error(const std::function<void()>& action, std::vector<std::string> needles);

}  // namespace glmrt::test
