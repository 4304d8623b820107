#include <glmrt/base/number_text.h>

#include <fmt/format.h>

#include <cmath>
#include <cstdint>

namespace glmrt {

std::string number_text(double value) {
  constexpr double kExactInteger = 9007199254740992.0;  // 2^53: every whole double below is exact
  if (std::floor(value) == value && std::fabs(value) <= kExactInteger)
    return fmt::format("{}", static_cast<int64_t>(value));
  return fmt::format("{}", value);
}

}  // namespace glmrt
