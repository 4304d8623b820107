// The byte automaton's objects: keys (declared names, or free ones where the
// schema allows other keys), values, and the branches of an object union
// (SchemaNode::object_branches) that the keys and values so far leave possible.
#include <glmrt/grammar/json_machine.h>

#include "machine_frames.h"
#include "string_text.h"

namespace glmrt::grammar {

using namespace machine;

uint32_t JsonMachine::branches_declaring(const SchemaNode& node, int property) {
  uint32_t mask = 0;
  for (size_t b = 0; b < node.object_branches.size(); ++b)
    if (node.object_branches[b].declares >> property & 1) mask |= uint32_t{1} << b;
  return mask;
}

bool JsonMachine::tells_branches(const Frame& object) const {
  if (object.kind != kObject || object.phase != kObjectValueIn || object.value < 0) return false;
  const SchemaNode& node = schema_->node(object.node);
  return !node.object_branches.empty() && node.properties[object.value].tells_branches;
}

bool JsonMachine::key_open(const Frame& object, int property) const {
  if (object.bits >> property & 1) return false;
  const SchemaNode& node = schema_->node(object.node);
  return node.object_branches.empty() || (object.count & branches_declaring(node, property));
}

bool JsonMachine::may_close(const Frame& object) const {
  const SchemaNode& node = schema_->node(object.node);
  if (node.object_branches.empty()) return (node.required & ~object.bits) == 0;
  for (size_t b = 0; b < node.object_branches.size(); ++b)
    if ((object.count >> b & 1) && (node.object_branches[b].required & ~object.bits) == 0)
      return true;
  return false;
}

bool JsonMachine::more_keys_possible(const Frame& object) const {
  const SchemaNode& node = schema_->node(object.node);
  if (node.additional >= 0) return true;
  if (!node.object_branches.empty()) {
    for (size_t b = 0; b < node.object_branches.size(); ++b)
      if ((object.count >> b & 1) && (node.object_branches[b].declares & ~object.bits)) return true;
    return false;
  }
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
  const bool all_required = may_close(f);
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
  bool open = false;
  for (uint32_t i = low; i < high && !open; ++i) open = key_open(object, names.tags[i]);
  // Only names already given (or no possible branch's): a dead end unless the
  // key may still leave them.
  if (!open && node.additional < 0) return kRejected;
  if (names.texts[low].size() == f.count + 1) {  // the closing quote: this name
    if (!key_open(object, names.tags[low])) return kRejected;
    return child_done(f.parent, names.tags[low]);
  }
  f.bits = pack_range(low, high);
  ++f.count;
  return replace(state, f);
}

}  // namespace glmrt::grammar
