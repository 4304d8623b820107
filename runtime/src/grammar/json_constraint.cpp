#include <glmrt/base/error.h>
#include <glmrt/grammar/json_constraint.h>

#include <algorithm>

namespace glmrt::grammar {

JsonConstraint::JsonConstraint(std::shared_ptr<const JsonSchema> schema,
                               std::shared_ptr<const TokenTrie> trie,
                               std::vector<int32_t> stop_tokens)
    : trie_(std::move(trie)), stop_tokens_(std::move(stop_tokens)), machine_(std::move(schema)) {
  if (!trie_) fail("grammar: a JSON constraint needs the vocabulary's trie");
  states_.push_back(machine_.snapshot(machine_.start()));
  mask_.assign(trie_->vocab_size(), 0);
}

StateRef JsonConstraint::state_after(std::span<const int32_t> generated) {
  const size_t common = static_cast<size_t>(
      std::mismatch(tokens_.begin(), tokens_.end(), generated.begin(), generated.end()).first -
      tokens_.begin());
  if (common < tokens_.size()) {
    tokens_.resize(common);
    states_.resize(common + 1);
    if (mask_length_ > static_cast<int64_t>(common)) mask_length_ = -1;
  }
  StateRef state = machine_.load(states_.back());
  for (size_t i = common; i < generated.size(); ++i) {
    const int32_t token = generated[i];
    const auto bytes = trie_->bytes(token);
    StateRef next = bytes ? machine_.step(state, *bytes) : kRejected;
    if (next == kRejected)
      fail("grammar: answer token {} (position {}) does not continue the JSON output", token, i);
    states_.push_back(machine_.snapshot(next));
    tokens_.push_back(token);
    state = machine_.load(states_.back());
  }
  return state;
}

void JsonConstraint::walk(std::span<const TokenTrie::Node> nodes, std::span<const int32_t> ids,
                          uint32_t node, StateRef state) {
  for (uint32_t t = nodes[node].tokens_begin; t < nodes[node].tokens_end; ++t) mask_[ids[t]] = 1;
  for (uint32_t child = node + 1; child < nodes[node].end; child = nodes[child].end) {
    ++walked_;
    const size_t mark = machine_.mark();
    const StateRef next = machine_.step(state, nodes[child].byte);
    if (next != kRejected) walk(nodes, ids, child, next);
    machine_.release(mark);
  }
}

std::span<const uint8_t> JsonConstraint::allowed(std::span<const int32_t> generated) {
  const StateRef state = state_after(generated);
  if (mask_length_ == static_cast<int64_t>(generated.size())) return mask_;
  std::fill(mask_.begin(), mask_.end(), 0);
  walked_ = 0;
  if (machine_.accepting(state))
    for (int32_t stop : stop_tokens_)
      if (stop >= 0 && static_cast<size_t>(stop) < mask_.size()) mask_[stop] = 1;
  if (const auto room = machine_.string_room(state)) {
    // Inside a string: plain text tokens are allowed by their length alone;
    // only the others (quotes, escapes, broken characters) are walked.
    const std::span<const uint32_t> lengths = trie_->plain_lengths();
    const std::span<const int32_t> plain = trie_->plain_tokens();
    for (size_t i = 0; i < plain.size() && lengths[i] <= *room; ++i) mask_[plain[i]] = 1;
    walk(trie_->string_nodes(), trie_->string_token_ids(), 0, state);
  } else {
    walk(trie_->nodes(), trie_->token_ids(), 0, state);
  }
  mask_length_ = static_cast<int64_t>(generated.size());
  return mask_;
}

bool JsonConstraint::complete(std::span<const int32_t> generated) {
  return machine_.finished(state_after(generated));
}

}  // namespace glmrt::grammar
