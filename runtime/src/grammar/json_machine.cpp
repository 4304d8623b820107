#include <glmrt/base/error.h>
#include <glmrt/grammar/json_machine.h>

#include "machine_frames.h"
#include "number_text.h"
#include "string_text.h"

#include <algorithm>

namespace glmrt::grammar {

using namespace machine;

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
    const size_t branches = node.object_branches.size();
    f.count = branches >= 32 ? ~uint32_t{0} : (uint32_t{1} << branches) - 1;
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

StateRef JsonMachine::child_done(StateRef parent, int tag) {
  Frame f = arena_[parent];
  f.spaces = 0;
  if (f.kind == kRoot) {
    f.phase = 1;
  } else if (f.kind == kObject) {
    const SchemaNode& node = schema_->node(f.node);
    if (f.phase == kObjectKeyIn) {
      f.phase = kObjectColon;
      f.value = tag;
      if (tag >= 0) f.bits |= uint64_t{1} << tag;
      if (tag >= 0 && !node.object_branches.empty()) f.count &= branches_declaring(node, tag);
    } else {
      if (tells_branches(f)) f.count &= static_cast<uint32_t>(tag);
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
  const LiteralSet& set = schema_->literals(f.node);
  const std::vector<std::string>& texts = set.texts;
  // Under an object union's discriminating key, only the values of branches
  // still possible; the tag of the value chosen tells the object which.
  const bool filtered = tells_branches(arena_[f.parent]);
  const uint32_t branches = filtered ? arena_[f.parent].count : 0;
  const auto allowed = [&](uint32_t i) {
    return !filtered || (static_cast<uint32_t>(set.tags[i]) & branches) != 0;
  };
  const uint32_t low0 = range_low(f.bits), high0 = range_high(f.bits);
  const auto [low, high] = narrow(texts, low0, high0, f.count, byte);
  if (low == high) {
    // No literal goes on with this byte: one that is complete ends here.
    if (low0 < high0 && texts[low0].size() == f.count && allowed(low0))
      return step(child_done(f.parent, set.tags[low0]), byte);
    return kRejected;
  }
  bool reachable = false;
  for (uint32_t i = low; i < high && !reachable; ++i) reachable = allowed(i);
  if (!reachable) return kRejected;
  if (texts[low].size() == f.count + 1 && high - low == 1)
    return child_done(f.parent, set.tags[low]);
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
