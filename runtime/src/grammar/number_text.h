// The phases of a number frame, shared by the automaton's number step and
// its bounds arithmetic. Private to src/grammar.
#pragma once

#include <cstdint>

namespace glmrt::grammar {

enum NumberPhase : uint8_t {
  kNumberStart,
  kNumberSign,
  kNumberInteger,
  kNumberPoint,
  kNumberFraction,
  kNumberExponentMark,
  kNumberExponentSign,
  kNumberExponent
};

inline constexpr uint8_t kNegative = 1;  // number flags: a minus sign came

}  // namespace glmrt::grammar
