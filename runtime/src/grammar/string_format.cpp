#include <glmrt/base/error.h>
#include <glmrt/grammar/string_format.h>

#include <bit>

namespace glmrt::grammar {
namespace {

using Fragment = StringPattern::Fragment;

Fragment pattern_digits(StringPattern& p, int n) {
  Fragment f = p.range('0', '9');
  for (int i = 1; i < n; ++i) f = p.then(f, p.range('0', '9'));
  return f;
}

Fragment pattern_two(StringPattern& p, char first_low, char first_high, char second_low,
                     char second_high) {
  return p.then(p.range(first_low, first_high), p.range(second_low, second_high));
}

// YYYY-MM-DD, months 01-12 and days 01-31.
Fragment pattern_date(StringPattern& p) {
  const Fragment month =
      StringPattern::either(pattern_two(p, '0', '0', '1', '9'), pattern_two(p, '1', '1', '0', '2'));
  const Fragment day = StringPattern::either(
      StringPattern::either(pattern_two(p, '0', '0', '1', '9'), pattern_two(p, '1', '2', '0', '9')),
      pattern_two(p, '3', '3', '0', '1'));
  Fragment f = p.then(pattern_digits(p, 4), p.literal("-"));
  f = p.then(f, month);
  f = p.then(f, p.literal("-"));
  return p.then(f, day);
}

Fragment pattern_hour(StringPattern& p) {
  return StringPattern::either(pattern_two(p, '0', '1', '0', '9'),
                               pattern_two(p, '2', '2', '0', '3'));
}

Fragment pattern_minutes(StringPattern& p) {
  return pattern_two(p, '0', '5', '0', '9');
}

// HH:MM:SS, an optional fraction, then Z or +HH:MM / -HH:MM (RFC 3339).
Fragment pattern_time(StringPattern& p) {
  Fragment f = p.then(pattern_hour(p), p.literal(":"));
  f = p.then(f, pattern_minutes(p));
  f = p.then(f, p.literal(":"));
  f = p.then(f, pattern_minutes(p));
  f = p.then(f, StringPattern::optional(p.then(p.literal("."), p.one_or_more(p.range('0', '9')))));
  Fragment offset = p.then(p.any_of("+-"), pattern_hour(p));
  offset = p.then(offset, p.literal(":"));
  offset = p.then(offset, pattern_minutes(p));
  return p.then(f, StringPattern::either(p.literal("Z"), offset));
}

Fragment pattern_hex(StringPattern& p, int n) {
  constexpr std::string_view kHex = "0123456789abcdefABCDEF";
  Fragment f = p.any_of(kHex);
  for (int i = 1; i < n; ++i) f = p.then(f, p.any_of(kHex));
  return f;
}

Fragment pattern_uuid(StringPattern& p) {
  Fragment f = pattern_hex(p, 8);
  for (int n : {4, 4, 4, 12}) f = p.then(p.then(f, p.literal("-")), pattern_hex(p, n));
  return f;
}

constexpr std::string_view kPatternAlnum =
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

// local@label(.label)+, local of letters, digits and ._%+-, labels of
// letters, digits and -.
Fragment pattern_email(StringPattern& p) {
  const Fragment local = p.one_or_more(p.any_of(std::string(kPatternAlnum) + "._%+-"));
  Fragment f = p.then(local, p.literal("@"));
  f = p.then(f, p.one_or_more(p.any_of(std::string(kPatternAlnum) + "-")));
  const Fragment label =
      p.then(p.literal("."), p.one_or_more(p.any_of(std::string(kPatternAlnum) + "-")));
  return p.then(f, p.one_or_more(label));
}

// 0-255 without leading zeros.
Fragment pattern_octet(StringPattern& p) {
  const Fragment two_fifty = p.then(p.literal("25"), p.range('0', '5'));
  const Fragment two_hundreds =
      p.then(p.then(p.literal("2"), p.range('0', '4')), p.range('0', '9'));
  const Fragment one_hundreds = p.then(p.literal("1"), pattern_digits(p, 2));
  const Fragment tens = p.then(p.range('1', '9'), p.range('0', '9'));
  return StringPattern::either(
      StringPattern::either(two_fifty, two_hundreds),
      StringPattern::either(one_hundreds, StringPattern::either(tens, p.range('0', '9'))));
}

Fragment pattern_ipv4(StringPattern& p) {
  Fragment f = pattern_octet(p);
  for (int i = 0; i < 3; ++i) f = p.then(p.then(f, p.literal(".")), pattern_octet(p));
  return f;
}

StringPattern pattern_build(Fragment (*pattern)(StringPattern&)) {
  StringPattern p;
  p.finish(pattern(p));
  return p;
}

Fragment pattern_date_time(StringPattern& p) {
  return p.then(p.then(pattern_date(p), p.literal("T")), pattern_time(p));
}

}  // namespace

std::optional<StringFormat> string_format_named(std::string_view name) {
  if (name == "date") return StringFormat::date;
  if (name == "date-time") return StringFormat::date_time;
  if (name == "time") return StringFormat::time;
  if (name == "uuid") return StringFormat::uuid;
  if (name == "email") return StringFormat::email;
  if (name == "ipv4") return StringFormat::ipv4;
  return std::nullopt;
}

const StringPattern& string_pattern(StringFormat format) {
  static const StringPattern kDate = pattern_build(pattern_date),
                             kDateTime = pattern_build(pattern_date_time),
                             kTime = pattern_build(pattern_time),
                             kUuid = pattern_build(pattern_uuid),
                             kEmail = pattern_build(pattern_email),
                             kIpv4 = pattern_build(pattern_ipv4);
  switch (format) {
    case StringFormat::date:
      return kDate;
    case StringFormat::date_time:
      return kDateTime;
    case StringFormat::time:
      return kTime;
    case StringFormat::uuid:
      return kUuid;
    case StringFormat::email:
      return kEmail;
    case StringFormat::ipv4:
      return kIpv4;
    case StringFormat::none:
      break;
  }
  fail("grammar: no pattern for an unformatted string");
}

uint64_t StringPattern::step(uint64_t state, uint8_t byte) const {
  uint64_t candidates = 0;
  if (state == 0) {
    candidates = whole_.first;
  } else {
    for (uint64_t s = state; s != 0; s &= s - 1) candidates |= follow_[std::countr_zero(s)];
  }
  uint64_t next = 0;
  for (uint64_t c = candidates; c != 0; c &= c - 1) {
    const int q = std::countr_zero(c);
    if (classes_[q][byte >> 6] >> (byte & 63) & 1) next |= uint64_t{1} << q;
  }
  return next;
}

bool StringPattern::accepting(uint64_t state) const {
  return state == 0 ? whole_.nullable : (state & whole_.last) != 0;
}

bool StringPattern::matches(std::string_view text) const {
  uint64_t state = 0;
  for (const char c : text) {
    state = step(state, static_cast<uint8_t>(c));
    if (state == 0) return false;
  }
  return accepting(state);
}

Fragment StringPattern::position(const std::array<uint64_t, 4>& bytes) {
  // Bit 0 of a state is a position too: 0 stands for "nothing read", which
  // no position set reached by a byte is.
  if (classes_.size() >= 63) fail("grammar: a string format pattern has more than 63 positions");
  classes_.push_back(bytes);
  follow_.push_back(0);
  const uint64_t bit = uint64_t{1} << (classes_.size() - 1);
  return {bit, bit, false};
}

Fragment StringPattern::any_of(std::string_view bytes) {
  std::array<uint64_t, 4> set{};
  for (const char c : bytes) {
    const auto b = static_cast<uint8_t>(c);
    set[b >> 6] |= uint64_t{1} << (b & 63);
  }
  return position(set);
}

Fragment StringPattern::range(char low, char high) {
  std::array<uint64_t, 4> set{};
  for (int b = static_cast<uint8_t>(low); b <= static_cast<uint8_t>(high); ++b)
    set[b >> 6] |= uint64_t{1} << (b & 63);
  return position(set);
}

Fragment StringPattern::literal(std::string_view text) {
  Fragment f = any_of(text.substr(0, 1));
  for (size_t i = 1; i < text.size(); ++i) f = then(f, any_of(text.substr(i, 1)));
  return f;
}

Fragment StringPattern::then(Fragment a, Fragment b) {
  for (uint64_t s = a.last; s != 0; s &= s - 1) follow_[std::countr_zero(s)] |= b.first;
  return {a.first | (a.nullable ? b.first : 0), b.last | (b.nullable ? a.last : 0),
          a.nullable && b.nullable};
}

Fragment StringPattern::either(Fragment a, Fragment b) {
  return {a.first | b.first, a.last | b.last, a.nullable || b.nullable};
}

Fragment StringPattern::optional(Fragment a) {
  a.nullable = true;
  return a;
}

Fragment StringPattern::one_or_more(Fragment a) {
  for (uint64_t s = a.last; s != 0; s &= s - 1) follow_[std::countr_zero(s)] |= a.first;
  return a;
}

}  // namespace glmrt::grammar
