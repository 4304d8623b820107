#include <glmrt/base/error.h>
#include <glmrt/grammar/json_machine.h>

#include "number_text.h"
#include "string_text.h"

#include <algorithm>

namespace glmrt::grammar {
namespace {

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

bool is_space(uint8_t b) {
  return b == ' ' || b == '\n' || b == '\t' || b == '\r';
}
bool is_digit(uint8_t b) {
  return b >= '0' && b <= '9';
}
uint64_t pack_range(uint32_t low, uint32_t high) {
  return low | (uint64_t{high} << 32);
}
uint32_t range_low(uint64_t bits) {
  return static_cast<uint32_t>(bits);
}
uint32_t range_high(uint64_t bits) {
  return static_cast<uint32_t>(bits >> 32);
}

// The texts of [low, high) whose byte at `pos` is `byte` (the set is sorted,
// and those of [low, high) share their first `pos` bytes).
std::pair<uint32_t, uint32_t> narrow(const std::vector<std::string>& texts, uint32_t low,
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

}  // namespace

std::optional<uint32_t> JsonMachine::string_room(StateRef state) const {
  const Frame& f = arena_[state];
  const bool free_key = f.kind == kKey && (f.flags & kFreeKey);
  if ((f.kind != kString && !free_key) || f.phase != kStringBody || f.pending != 0)
    return std::nullopt;
  if (free_key) return kNoLimit;
  // A formatted string takes only what its pattern allows next: every token is walked.
  if (schema_->node(f.node).format != StringFormat::none) return std::nullopt;
  const uint32_t max = schema_->node(f.node).max_length;
  return max == kNoLimit ? kNoLimit : max - f.count;
}

JsonMachine::JsonMachine(std::shared_ptr<const JsonSchema> schema) : schema_(std::move(schema)) {
  if (!schema_) fail("grammar: a JSON machine needs a schema");
}

StateRef JsonMachine::push(const Frame& frame) {
  arena_.push_back(frame);
  return static_cast<StateRef>(arena_.size() - 1);
}

StateRef JsonMachine::replace(StateRef state, const Frame& frame) {
  Frame copy = frame;
  copy.parent = arena_[state].parent;
  return push(copy);
}

StateRef JsonMachine::start() {
  arena_.clear();
  Frame root;
  root.kind = kRoot;
  root.node = schema_->root();
  return push(root);
}

StateRef JsonMachine::step(StateRef state, std::string_view bytes) {
  for (const char c : bytes) {
    if (state == kRejected) return kRejected;
    state = step(state, static_cast<uint8_t>(c));
  }
  return state;
}

StateRef JsonMachine::step(StateRef state, uint8_t byte) {
  switch (arena_[state].kind) {
    case kRoot:
      return step_root(state, byte);
    case kValue:
      return step_value(state, byte);
    case kObject:
      return step_object(state, byte);
    case kKey:
      return step_key(state, byte);
    case kArray:
      return step_array(state, byte);
    case kString:
      return step_string(state, byte);
    case kNumber:
      return step_number(state, byte);
    case kLiteral:
      return step_literal(state, byte);
  }
  return kRejected;
}

StateRef JsonMachine::start_value(StateRef parent, int node_index, uint8_t byte, uint8_t depth) {
  const SchemaNode& node = schema_->node(node_index);
  Frame f;
  f.parent = parent;
  f.node = node_index;
  f.depth = depth;
  const auto literal = [&](int set) {
    f.kind = kLiteral;
    f.node = set;
    f.bits = pack_range(0, static_cast<uint32_t>(schema_->literals(set).texts.size()));
    return step_literal(push(f), byte);
  };
  if (node.literals >= 0) {
    const auto& texts = schema_->literals(node.literals).texts;
    const auto [low, high] = narrow(texts, 0, static_cast<uint32_t>(texts.size()), 0, byte);
    if (!node.literals_or_types || low < high) return literal(node.literals);
  }
  const uint8_t t = node.types;
  if (byte == '{' && (t & kObjectType) && depth < kMaxNesting) {
    f.kind = kObject;
    f.phase = kObjectOpen;
    f.depth = static_cast<uint8_t>(depth + 1);
    return push(f);
  }
  if (byte == '[' && (t & kArrayType) && depth < kMaxNesting) {
    f.kind = kArray;
    f.phase = kArrayOpen;
    f.depth = static_cast<uint8_t>(depth + 1);
    return push(f);
  }
  if (byte == '"' && (t & kStringType)) {
    f.kind = kString;
    return push(f);
  }
  if ((byte == '-' || is_digit(byte)) && (t & (kNumberType | kIntegerType))) {
    f.kind = kNumber;
    return step_number(push(f), byte);
  }
  if ((byte == 't' || byte == 'f') && (t & kBooleanType))
    return literal(schema_->boolean_literals());
  if (byte == 'n' && (t & kNullType)) return literal(schema_->null_literals());
  return kRejected;
}

StateRef JsonMachine::child_done(StateRef parent, int property) {
  Frame f = arena_[parent];
  f.spaces = 0;
  if (f.kind == kRoot) {
    f.phase = 1;
  } else if (f.kind == kObject) {
    if (f.phase == kObjectKeyIn) {
      f.phase = kObjectColon;
      f.value = property;
      if (property >= 0) f.bits |= uint64_t{1} << property;
    } else {
      f.phase = kObjectAfterValue;
    }
  } else if (f.kind == kArray) {
    f.phase = kArrayAfterValue;
    ++f.count;
  }
  return replace(parent, f);
}

StateRef JsonMachine::step_root(StateRef state, uint8_t byte) {
  const Frame f = arena_[state];
  if (f.phase != 0) return kRejected;  // nothing follows the value
  return start_value(state, f.node, byte, 0);
}

StateRef JsonMachine::step_value(StateRef state, uint8_t byte) {
  Frame f = arena_[state];
  if (is_space(byte)) {
    if (f.spaces >= kMaxWhitespace) return kRejected;
    ++f.spaces;
    return replace(state, f);
  }
  return start_value(f.parent, f.node, byte, f.depth);
}

bool JsonMachine::more_keys_possible(const Frame& object) const {
  const SchemaNode& node = schema_->node(object.node);
  if (node.additional >= 0) return true;
  const uint64_t all =
      node.properties.size() >= 64 ? ~uint64_t{0} : (uint64_t{1} << node.properties.size()) - 1;
  return (object.bits & all) != all;
}

StateRef JsonMachine::step_object(StateRef state, uint8_t byte) {
  Frame f = arena_[state];
  const SchemaNode& node = schema_->node(f.node);
  if (is_space(byte)) {
    if (f.spaces >= kMaxWhitespace) return kRejected;
    ++f.spaces;
    return replace(state, f);
  }
  const bool all_required = (node.required & ~f.bits) == 0;
  switch (f.phase) {
    case kObjectOpen:
    case kObjectComma:
      if (byte == '"' && more_keys_possible(f)) {
        f.phase = kObjectKeyIn;
        f.spaces = 0;
        const StateRef object = replace(state, f);
        Frame key;
        key.parent = object;
        key.kind = kKey;
        key.depth = f.depth;
        if (node.keys < 0) {  // no declared names: any key
          key.flags = kFreeKey;
          key.node = f.node;
          return push(key);
        }
        key.node = node.keys;
        key.bits = pack_range(0, static_cast<uint32_t>(schema_->literals(node.keys).texts.size()));
        return step_key(push(key), byte);
      }
      if (byte == '}' && f.phase == kObjectOpen && all_required) return child_done(f.parent, -1);
      return kRejected;
    case kObjectColon: {
      if (byte != ':') return kRejected;
      f.phase = kObjectValueIn;
      f.spaces = 0;
      const StateRef object = replace(state, f);
      Frame value;
      value.parent = object;
      value.kind = kValue;
      value.node = f.value >= 0 ? node.properties[f.value].node : node.additional;
      value.depth = f.depth;
      return push(value);
    }
    case kObjectAfterValue:
      if (byte == ',' && more_keys_possible(f)) {
        f.phase = kObjectComma;
        f.spaces = 0;
        return replace(state, f);
      }
      if (byte == '}' && all_required) return child_done(f.parent, -1);
      return kRejected;
    default:
      return kRejected;
  }
}

StateRef JsonMachine::free_key(StateRef state, uint8_t byte) {
  return string_text_step(state, byte, 0, kNoLimit);
}

StateRef JsonMachine::step_key(StateRef state, uint8_t byte) {
  Frame f = arena_[state];
  if (f.flags & kFreeKey) return free_key(state, byte);
  const LiteralSet& names = schema_->literals(f.node);
  const Frame& object = arena_[f.parent];
  const SchemaNode& node = schema_->node(object.node);
  const uint64_t seen = object.bits;
  const auto [low, high] =
      narrow(names.texts, range_low(f.bits), range_high(f.bits), f.count, byte);
  if (low == high) {
    // The key left every declared name: another key, when the schema allows.
    if (node.additional < 0) return kRejected;
    Frame key = f;
    key.flags = kFreeKey;
    key.node = object.node;
    key.count = 0;
    StateRef s = replace(state, key);
    const std::string& prefix = names.texts[range_low(f.bits)];
    for (uint32_t i = 1; i < f.count && s != kRejected; ++i)
      s = free_key(s, static_cast<uint8_t>(prefix[i]));
    return s == kRejected ? kRejected : free_key(s, byte);
  }
  bool unseen = false;
  for (uint32_t i = low; i < high && !unseen; ++i) unseen = !(seen >> names.tags[i] & 1);
  // Only names already given: a dead end unless the key may still leave them.
  if (!unseen && node.additional < 0) return kRejected;
  if (names.texts[low].size() == f.count + 1) {  // the closing quote: this name
    if (seen >> names.tags[low] & 1) return kRejected;
    return child_done(f.parent, names.tags[low]);
  }
  f.bits = pack_range(low, high);
  ++f.count;
  return replace(state, f);
}

StateRef JsonMachine::step_array(StateRef state, uint8_t byte) {
  Frame f = arena_[state];
  const SchemaNode& node = schema_->node(f.node);
  if (is_space(byte) && f.phase != kArrayValueIn) {
    if (f.spaces >= kMaxWhitespace) return kRejected;
    ++f.spaces;
    return replace(state, f);
  }
  switch (f.phase) {
    case kArrayOpen:
      if (byte == ']') return node.min_items == 0 ? child_done(f.parent, -1) : kRejected;
      if (node.max_items == 0) return kRejected;
      [[fallthrough]];
    case kArrayComma: {
      f.phase = kArrayValueIn;
      f.spaces = 0;
      return start_value(replace(state, f), node.items, byte, f.depth);
    }
    case kArrayAfterValue:
      if (byte == ',' && f.count < node.max_items) {
        f.phase = kArrayComma;
        f.spaces = 0;
        return replace(state, f);
      }
      if (byte == ']' && f.count >= node.min_items) return child_done(f.parent, -1);
      return kRejected;
    default:
      return kRejected;
  }
}

StateRef JsonMachine::step_string(StateRef state, uint8_t byte) {
  const SchemaNode& node = schema_->node(arena_[state].node);
  if (node.format == StringFormat::none)
    return string_text_step(state, byte, node.min_length, node.max_length);
  // A format's characters are plain ASCII (no escapes); `bits` holds the
  // pattern's positions (0 before the first character).
  Frame f = arena_[state];
  const StringPattern& pattern = string_pattern(node.format);
  if (byte == '"') return pattern.accepting(f.bits) ? child_done(f.parent, -1) : kRejected;
  const uint64_t next = pattern.step(f.bits, byte);
  if (next == 0) return kRejected;
  f.bits = next;
  ++f.count;
  return replace(state, f);
}

StateRef JsonMachine::string_text_step(StateRef state, uint8_t byte, uint32_t min_length,
                                       uint32_t max_length) {
  Frame f = arena_[state];
  switch (string_byte(f, byte, min_length, max_length)) {
    case StringStep::rejected:
      return kRejected;
    case StringStep::closed:
      return child_done(f.parent, -1);
    case StringStep::more:
      break;
  }
  return replace(state, f);
}

StateRef JsonMachine::step_literal(StateRef state, uint8_t byte) {
  Frame f = arena_[state];
  const std::vector<std::string>& texts = schema_->literals(f.node).texts;
  const uint32_t low0 = range_low(f.bits), high0 = range_high(f.bits);
  const auto [low, high] = narrow(texts, low0, high0, f.count, byte);
  if (low == high) {
    // No literal goes on with this byte: one that is complete ends here.
    if (low0 < high0 && texts[low0].size() == f.count) return step(child_done(f.parent, -1), byte);
    return kRejected;
  }
  if (texts[low].size() == f.count + 1 && high - low == 1) return child_done(f.parent, -1);
  f.bits = pack_range(low, high);
  ++f.count;
  return replace(state, f);
}

bool JsonMachine::accepting(StateRef state) const {
  const Frame& f = arena_[state];
  if (f.kind == kRoot) return f.phase == 1;
  if (f.parent < 0 || arena_[f.parent].kind != kRoot) return false;
  if (f.kind == kNumber) return number_complete_in_range(schema_->node(f.node), f);
  if (f.kind == kLiteral) {
    const auto& texts = schema_->literals(f.node).texts;
    const uint32_t low = range_low(f.bits);
    return low < range_high(f.bits) && texts[low].size() == f.count;
  }
  return false;
}

bool JsonMachine::finished(StateRef state) {
  if (!accepting(state)) return false;
  if (arena_[state].kind == kRoot) return true;
  const size_t before = mark();
  bool more = false;
  for (int b = 0; b < 256 && !more; ++b) more = step(state, static_cast<uint8_t>(b)) != kRejected;
  release(before);
  return !more;
}

std::vector<Frame> JsonMachine::snapshot(StateRef state) const {
  std::vector<Frame> chain;
  for (StateRef s = state; s >= 0; s = arena_[s].parent) chain.push_back(arena_[s]);
  std::reverse(chain.begin(), chain.end());
  for (size_t i = 0; i < chain.size(); ++i) chain[i].parent = static_cast<int32_t>(i) - 1;
  return chain;
}

StateRef JsonMachine::load(const std::vector<Frame>& frames) {
  if (frames.empty()) fail("grammar: an empty state cannot be loaded");
  arena_.assign(frames.begin(), frames.end());
  return static_cast<StateRef>(arena_.size() - 1);
}

}  // namespace glmrt::grammar
