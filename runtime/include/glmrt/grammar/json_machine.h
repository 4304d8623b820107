// A pushdown automaton over the bytes of a JSON text that a JsonSchema
// admits: each byte is accepted only when some continuation of the text so
// far is a complete value the schema allows, so constrained output never
// reaches a dead end. Bounds are enforced as the text grows (an integer
// with maximum 100 cannot grow a third digit past 100; a string stops
// taking characters at maxLength), whitespace runs between tokens are at
// most kMaxWhitespace bytes, objects and arrays nest at most kMaxNesting
// deep, and the text ends with the value: nothing follows it.
//
// States are frames on a persistent stack in an arena: a step never changes
// a frame, it adds new ones above, so one state is one index and a walk
// over many continuations (every token of a vocabulary) shares prefixes and
// gives back its frames with release(). Frames below base() are the
// committed state, loaded with load().
#pragma once

#include <glmrt/grammar/json_schema.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

namespace glmrt::grammar {

inline constexpr int kMaxWhitespace = 4;
inline constexpr int kMaxNesting = 32;

struct Frame {
  int32_t parent = -1;
  int32_t node = 0;  // schema node (a literal set for literal and key frames)
  uint8_t kind = 0;
  uint8_t phase = 0;
  uint8_t spaces = 0;  // whitespace bytes in the current run
  uint8_t flags = 0;
  uint8_t depth = 0;                    // objects and arrays around this frame
  uint8_t pending = 0;                  // string: UTF-8 continuation bytes still due
  uint8_t next_low = 0, next_high = 0;  // string: the next continuation byte's range
  uint32_t count = 0;  // string: code points; array: items; number: integer digits; literal: bytes;
                       // object: the union branches still possible (a mask)
  uint64_t bits = 0;   // object: properties seen; literal: candidate range
  int64_t value = 0;   // number: integer part; object: the property whose value comes next
  int64_t fraction = 0;          // number: fraction digits' value; string: \u escape's value
  uint32_t fraction_digits = 0;  // number: fraction or exponent digits
};

/// A state: the index of its top frame, or kRejected.
using StateRef = int32_t;
inline constexpr StateRef kRejected = -1;

class JsonMachine {
 public:
  explicit JsonMachine(std::shared_ptr<const JsonSchema> schema);

  /// The state before any byte.
  StateRef start();
  /// The state after `byte`, or kRejected. Adds frames to the arena.
  StateRef step(StateRef state, uint8_t byte);
  StateRef step(StateRef state, std::string_view bytes);
  /// The text so far is a complete value (it may still grow: a number).
  bool accepting(StateRef state) const;
  /// Complete, and no byte may follow.
  bool finished(StateRef state);

  /// Arena discipline for walks: frames added after mark() go with release().
  size_t mark() const { return arena_.size(); }
  void release(size_t mark) { arena_.resize(mark); }

  /// The committed frames of `state`, bottom first (a compact copy).
  std::vector<Frame> snapshot(StateRef state) const;
  /// Makes `frames` (a snapshot) the arena's base; returns its state.
  StateRef load(const std::vector<Frame>& frames);

  const JsonSchema& schema() const { return *schema_; }

  /// Inside a string's text at a character boundary (no escape or UTF-8
  /// sequence open): how many more code points it may take (kNoLimit for
  /// keys and unbounded strings). Nothing elsewhere.
  std::optional<uint32_t> string_room(StateRef state) const;

 private:
  StateRef push(const Frame& frame);
  StateRef replace(StateRef state, const Frame& frame);  // same parent, new contents
  StateRef start_value(StateRef parent, int node, uint8_t byte, uint8_t depth);
  /// `tag`: a key's property index, a literal's tag (object unions' values).
  StateRef child_done(StateRef parent, int tag);
  StateRef step_root(StateRef state, uint8_t byte);
  StateRef step_value(StateRef state, uint8_t byte);
  StateRef step_object(StateRef state, uint8_t byte);
  StateRef step_key(StateRef state, uint8_t byte);
  StateRef step_array(StateRef state, uint8_t byte);
  StateRef step_string(StateRef state, uint8_t byte);
  StateRef step_number(StateRef state, uint8_t byte);
  StateRef step_literal(StateRef state, uint8_t byte);
  StateRef free_key(StateRef state, uint8_t byte);
  /// A byte of string text (a value or a free key) within these lengths.
  StateRef string_text_step(StateRef state, uint8_t byte, uint32_t min_length, uint32_t max_length);
  bool more_keys_possible(const Frame& object) const;
  // Object unions (SchemaNode::object_branches): an object frame's `count`
  // is the mask of the branches its keys and values so far leave possible.
  static uint32_t branches_declaring(const SchemaNode& node, int property);
  bool tells_branches(const Frame& object) const;  // its value now is a discriminator
  bool key_open(const Frame& object, int property) const;
  bool may_close(const Frame& object) const;

  std::shared_ptr<const JsonSchema> schema_;
  std::vector<Frame> arena_;
};

/// Number frames' bounds check: whether some completion of the digits so far
/// (sign, integer part, point, fraction) within the digit caps lies in
/// [node.low, node.high]. Exposed for its tests.
bool number_prefix_feasible(const SchemaNode& node, const Frame& number);
/// Whether the number so far is complete and within the node's bounds.
bool number_complete_in_range(const SchemaNode& node, const Frame& number);

/// When `bytes` are plain string text (printable ASCII but `"` and `\`,
/// and whole, valid UTF-8 characters), their length in code points: inside
/// a string they do nothing but add that many characters.
std::optional<uint32_t> plain_string_length(std::string_view bytes);

}  // namespace glmrt::grammar
