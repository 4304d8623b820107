// What the byte automaton's source files share: frame kinds and phases, and
// the sorted-literal narrowing. Private to src/grammar.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace glmrt::grammar::machine {

enum Kind : uint8_t { kRoot, kValue, kObject, kKey, kArray, kString, kNumber, kLiteral };

// Object phases (the object is below a key or value frame in kKeyIn / kValueIn).
enum ObjectPhase : uint8_t {
  kObjectOpen,
  kObjectColon,
  kObjectValueIn,
  kObjectAfterValue,
  kObjectComma,
  kObjectKeyIn
};
enum ArrayPhase : uint8_t { kArrayOpen, kArrayValueIn, kArrayAfterValue, kArrayComma };

constexpr uint8_t kFreeKey = 1;  // key flags: a key no declared name starts with

inline bool is_space(uint8_t b) {
  return b == ' ' || b == '\n' || b == '\t' || b == '\r';
}
inline bool is_digit(uint8_t b) {
  return b >= '0' && b <= '9';
}
inline uint64_t pack_range(uint32_t low, uint32_t high) {
  return low | (uint64_t{high} << 32);
}
inline uint32_t range_low(uint64_t bits) {
  return static_cast<uint32_t>(bits);
}
inline uint32_t range_high(uint64_t bits) {
  return static_cast<uint32_t>(bits >> 32);
}

// The texts of [low, high) whose byte at `pos` is `byte` (the set is sorted,
// and those of [low, high) share their first `pos` bytes).
inline std::pair<uint32_t, uint32_t> narrow(const std::vector<std::string>& texts, uint32_t low,
                                            uint32_t high, uint32_t pos, uint8_t byte) {
  const auto key = [pos](const std::string& t) {
    return t.size() > pos ? static_cast<int>(static_cast<uint8_t>(t[pos])) : -1;
  };
  const auto first = std::partition_point(texts.begin() + low, texts.begin() + high,
                                          [&](const std::string& t) { return key(t) < byte; });
  const auto last = std::partition_point(first, texts.begin() + high,
                                         [&](const std::string& t) { return key(t) == byte; });
  return {static_cast<uint32_t>(first - texts.begin()),
          static_cast<uint32_t>(last - texts.begin())};
}

}  // namespace glmrt::grammar::machine
