// Numbers in the automaton: the step over a number's bytes, and the
// bound-aware arithmetic behind it: which values the digits so far can
// still become, in units of 10^-kFractionDigits.
#include <glmrt/grammar/json_machine.h>

#include "number_text.h"

#include <algorithm>

namespace glmrt::grammar {
namespace {

bool is_number_digit(uint8_t b) {
  return b >= '0' && b <= '9';
}

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
  const bool negative = (number.flags & kNegative) != 0;
  switch (number.phase) {
    case kNumberSign: {
      const Scaled widest =
          fractions ? ten_to(kIntegerDigits) * unit - 1 : (ten_to(kIntegerDigits) - 1) * unit;
      return overlaps(0, widest, negative, node);
    }
    case kNumberInteger: {
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
    case kNumberPoint:
    case kNumberFraction: {
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
    case kNumberInteger:
      value = Scaled{number.value} * unit;
      break;
    case kNumberFraction:
      value = Scaled{number.value} * unit +
              Scaled{number.fraction} *
                  ten_to(kFractionDigits - static_cast<int>(number.fraction_digits));
      break;
    case kNumberExponent:
      return true;  // only unbounded numbers take an exponent
    default:
      return false;
  }
  if (number.flags & kNegative) {
    if (value == 0) return false;  // "-0", "-0.0": not written
    value = -value;
  }
  return !node.bounded || (value >= node.low && value <= node.high);
}

StateRef JsonMachine::step_number(StateRef state, uint8_t byte) {
  Frame f = arena_[state];
  const SchemaNode& node = schema_->node(f.node);
  const bool fractions = (node.types & kNumberType) != 0;
  bool checked = false;  // the bounds may rule the new prefix out
  if (is_number_digit(byte)) {
    const int d = byte - '0';
    switch (f.phase) {
      case kNumberStart:
      case kNumberSign:
        f.value = d;
        f.count = 1;
        f.phase = kNumberInteger;
        break;
      case kNumberInteger:
        if (f.value == 0 || f.count >= static_cast<uint32_t>(kIntegerDigits)) return kRejected;
        f.value = f.value * 10 + d;
        ++f.count;
        break;
      case kNumberPoint:
      case kNumberFraction:
        if (f.fraction_digits >= static_cast<uint32_t>(kFractionDigits)) return kRejected;
        f.fraction = f.fraction * 10 + d;
        ++f.fraction_digits;
        f.phase = kNumberFraction;
        break;
      default:  // exponent digits (unbounded numbers only)
        if (f.pending >= kExponentDigits) return kRejected;
        ++f.pending;
        f.phase = kNumberExponent;
        return replace(state, f);
    }
    checked = true;
  } else if (byte == '-' && f.phase == kNumberStart) {
    f.flags |= kNegative;
    f.phase = kNumberSign;
    checked = true;
  } else if (byte == '.' && f.phase == kNumberInteger && fractions) {
    f.phase = kNumberPoint;
    checked = true;
  } else if ((byte == 'e' || byte == 'E') && fractions && !node.bounded &&
             (f.phase == kNumberInteger || f.phase == kNumberFraction)) {
    f.phase = kNumberExponentMark;
    return replace(state, f);
  } else if ((byte == '-' || byte == '+') && f.phase == kNumberExponentMark) {
    f.phase = kNumberExponentSign;
    return replace(state, f);
  } else {
    // Not part of the number: it ends here, and the byte is the parent's.
    if (!number_complete_in_range(node, f)) return kRejected;
    return step(child_done(f.parent, -1), byte);
  }
  if (checked && !number_prefix_feasible(node, f)) return kRejected;
  return replace(state, f);
}

}  // namespace glmrt::grammar
