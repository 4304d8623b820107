// The BPE `model` of a tokenizer.json: vocabulary, ranked merges and the
// options the Hugging Face library implements (byte_fallback, unk_token /
// fuse_unk, continuing_subword_prefix, end_of_word_suffix, ignore_merges).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "component_json.h"
#include "merge_table.h"
#include "word_cache.h"

namespace glmrt::text {

class BpeModel {
 public:
  using Id = std::uint32_t;

  BpeModel(const Json& spec, const JsonPath& where);
  // A plain BPE vocabulary given as parts (what a GGUF file holds): tokens by
  // id (nullopt: no token), merges by rank. Without the JSON detour, which
  // costs seconds for 150k tokens.
  BpeModel(std::span<const std::optional<std::string>> tokens,
           std::span<const std::pair<std::string, std::string>> merges, const JsonPath& where);

  // Appends the ids of one pre-token word. Thread-safe (the cache locks).
  void tokenize(std::string_view word, std::vector<Id>& out) const;

  std::optional<Id> token_to_id(std::string_view token) const;
  const std::string* id_to_token(Id id) const;
  // Number of vocabulary entries (the library's get_vocab_size).
  std::size_t vocab_entries() const { return vocab_.size(); }
  // One past the largest vocabulary id.
  std::size_t id_end() const { return id_end_; }
  void clear_cache() const { cache_.clear(); }

 private:
  void add_token(std::string token, Id id);
  void add_merges(std::span<const std::pair<std::string, std::string>> merges,
                  const JsonPath& where);
  void index_chars();
  std::vector<Id> merge_word(std::string_view word) const;

  std::unordered_map<std::string, Id, StringHash, std::equal_to<>> vocab_;
  // A map, not a vector indexed by id: ids may have gaps (as the library
  // allows), and one id near the 2^28 limit must not cost gigabytes.
  std::unordered_map<Id, std::string> tokens_by_id_;
  std::size_t id_end_ = 0;
  MergeTable merges_;
  // Ids of one-character tokens for code points below kCharTableSize (all
  // byte-level symbols are), to skip hashing the first pass; -1 = absent.
  static constexpr std::size_t kCharTableSize = 0x800;
  std::vector<std::int64_t> char_ids_;
  std::optional<std::string> unk_token_;
  std::string continuing_subword_prefix_;
  std::string end_of_word_suffix_;
  bool fuse_unk_ = false;
  bool byte_fallback_ = false;
  bool ignore_merges_ = false;
  WordCache cache_{1 << 16};
};

}  // namespace glmrt::text
