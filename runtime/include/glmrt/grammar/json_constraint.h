// Constrained decoding to JSON: the TokenConstraint that lets a token come
// next only when its bytes continue the JSON text so far toward a value the
// schema admits (one walk of the vocabulary's trie per step, sharing
// prefixes), the stop tokens only once the value is complete, and nothing
// else (special tokens spell no bytes). States are kept per answer token,
// so a shorter answer (drafts rejected) costs no recomputation.
#pragma once

#include <glmrt/grammar/json_machine.h>
#include <glmrt/grammar/token_trie.h>
#include <glmrt/sampling/token_constraint.h>

#include <memory>
#include <span>
#include <vector>

namespace glmrt::grammar {

class JsonConstraint : public TokenConstraint {
 public:
  /// `stop_tokens`: what may end the answer once the JSON is complete.
  JsonConstraint(std::shared_ptr<const JsonSchema> schema, std::shared_ptr<const TokenTrie> trie,
                 std::vector<int32_t> stop_tokens);

  std::span<const uint8_t> allowed(std::span<const int32_t> generated) override;
  bool complete(std::span<const int32_t> generated) override;

  /// Tokens the last allowed() walk stepped through (the cost of a mask).
  size_t last_walk_nodes() const { return walked_; }

 private:
  /// The state after `generated`, loaded into the machine; throws when a
  /// token does not continue the JSON (the answer did not come from the mask).
  StateRef state_after(std::span<const int32_t> generated);
  void walk(std::span<const TokenTrie::Node> nodes, std::span<const int32_t> ids, uint32_t node,
            StateRef state);

  std::shared_ptr<const TokenTrie> trie_;
  std::vector<int32_t> stop_tokens_;
  JsonMachine machine_;
  std::vector<int32_t> tokens_;             // the answer states_ follow
  std::vector<std::vector<Frame>> states_;  // states_[i]: after tokens_[0..i)
  std::vector<uint8_t> mask_;
  int64_t mask_length_ = -1;  // the answer length mask_ is for (its tokens are tokens_'s)
  size_t walked_ = 0;
};

}  // namespace glmrt::grammar
