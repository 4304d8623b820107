// The one exception type of the core. Its message always names what was being
// read (file, tensor, key or field) and what was expected.
#pragma once

#include <fmt/format.h>
#include <fmt/std.h>

#include <stdexcept>
#include <string>

namespace glmrt {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

template <typename... Args>
[[noreturn]] void fail(fmt::format_string<Args...> format, Args&&... args) {
  throw Error(fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace glmrt
