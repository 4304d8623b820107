// The bound-aware digit automaton's arithmetic: which values the digits of
// a number so far can still become, in units of 10^-kFractionDigits.
#include <glmrt/grammar/json_machine.h>

#include <algorithm>

namespace glmrt::grammar {
namespace {

// Number phases, as json_machine.cpp numbers them.
constexpr uint8_t kSign = 1, kInteger = 2, kPoint = 3, kFraction = 4, kExponent = 7;
constexpr uint8_t kNegativeFlag = 1;

Scaled ten_to(int n) {
  Scaled p = 1;
  for (int i = 0; i < n; ++i) p *= 10;
  return p;
}

// Whether [low, high] (magnitudes; negated when negative) meets the node's
// bounds. A negative number is never zero: "-0" is not written.
bool overlaps(Scaled low, Scaled high, bool negative, const SchemaNode& node) {
  if (negative) low = std::max(low, Scaled{1});
  if (low > high) return false;
  const Scaled a = negative ? -high : low;
  const Scaled b = negative ? -low : high;
  return std::max(a, node.low) <= std::min(b, node.high);
}

}  // namespace

bool number_prefix_feasible(const SchemaNode& node, const Frame& number) {
  const Scaled unit = ten_to(kFractionDigits);
  const bool fractions = (node.types & kNumberType) != 0;
  const bool negative = (number.flags & kNegativeFlag) != 0;
  switch (number.phase) {
    case kSign: {
      const Scaled widest =
          fractions ? ten_to(kIntegerDigits) * unit - 1 : (ten_to(kIntegerDigits) - 1) * unit;
      return overlaps(0, widest, negative, node);
    }
    case kInteger: {
      const Scaled v = number.value;
      // The integer part may still grow to kIntegerDigits digits (not after a 0).
      const int more = v == 0 ? 0 : kIntegerDigits - static_cast<int>(number.count);
      for (int k = 0; k <= more; ++k) {
        const Scaled scale = ten_to(k);
        const Scaled low = v * scale * unit;
        const Scaled high = fractions ? (v + 1) * scale * unit - 1 : ((v + 1) * scale - 1) * unit;
        if (overlaps(low, high, negative, node)) return true;
      }
      return false;
    }
    case kPoint:
    case kFraction: {
      const Scaled place = ten_to(kFractionDigits - static_cast<int>(number.fraction_digits));
      const Scaled low = Scaled{number.value} * unit + Scaled{number.fraction} * place;
      return overlaps(low, low + place - 1, negative, node);
    }
    default:
      return true;
  }
}

bool number_complete_in_range(const SchemaNode& node, const Frame& number) {
  Scaled value = 0;
  const Scaled unit = ten_to(kFractionDigits);
  switch (number.phase) {
    case kInteger:
      value = Scaled{number.value} * unit;
      break;
    case kFraction:
      value = Scaled{number.value} * unit +
              Scaled{number.fraction} *
                  ten_to(kFractionDigits - static_cast<int>(number.fraction_digits));
      break;
    case kExponent:
      return true;  // only unbounded numbers take an exponent
    default:
      return false;
  }
  if (number.flags & kNegativeFlag) {
    if (value == 0) return false;  // "-0", "-0.0": not written
    value = -value;
  }
  return !node.bounded || (value >= node.low && value <= node.high);
}

}  // namespace glmrt::grammar
