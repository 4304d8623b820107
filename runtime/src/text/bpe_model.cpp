#include "bpe_model.h"

#include <algorithm>
#include <queue>

#include "utf8.h"

namespace glmrt::text {

namespace {

// Words longer than this (in bytes) are not cached, as in the library.
constexpr std::size_t kMaxCachedWordBytes = 256;

std::pair<std::string, std::string> parse_merge(const Json& merge, const JsonPath& where) {
  if (merge.is_array() && merge.size() == 2 && merge[0].is_string() && merge[1].is_string())
    return {merge[0].get<std::string>(), merge[1].get<std::string>()};
  if (merge.is_string()) {
    const auto text = merge.get_ref<const std::string&>();
    const auto space = text.find(' ');
    if (space != std::string::npos && text.find(' ', space + 1) == std::string::npos)
      return {text.substr(0, space), text.substr(space + 1)};
  }
  fail("{}: a merge must be \"left right\" or [\"left\", \"right\"], got {}", where.text,
       merge.dump());
}

}  // namespace

BpeModel::BpeModel(const Json& spec, const JsonPath& where) {
  const Json& dropout = spec.contains("dropout") ? spec["dropout"] : Json();
  if (!dropout.is_null() && !(dropout.is_number() && dropout.get<double>() == 0.0))
    fail("{}: BPE dropout is not supported (dropout = {})", where.text, dropout.dump());
  const Json& vocab = require(spec, "vocab", where);
  if (!vocab.is_object()) fail("{}: 'vocab' must be an object", where.text);
  vocab_.reserve(vocab.size());
  for (const auto& [token, id] : vocab.items()) {
    if (!id.is_number_unsigned())
      fail("{}: vocab entry '{}' must map to a non-negative id", where.text, token);
    const auto value = id.get<std::uint64_t>();
    if (value > 0xFFFFFFF) fail("{}: vocab id {} of '{}' is too large", where.text, value, token);
    add_token(token, static_cast<Id>(value));
  }
  unk_token_ = spec.contains("unk_token") && spec["unk_token"].is_string()
                   ? std::optional(spec["unk_token"].get<std::string>())
                   : std::nullopt;
  continuing_subword_prefix_ =
      optional_value<std::string>(spec, "continuing_subword_prefix", "", where);
  end_of_word_suffix_ = optional_value<std::string>(spec, "end_of_word_suffix", "", where);
  fuse_unk_ = optional_value(spec, "fuse_unk", false, where);
  byte_fallback_ = optional_value(spec, "byte_fallback", false, where);
  ignore_merges_ = optional_value(spec, "ignore_merges", false, where);
  const Json& merges = require(spec, "merges", where);
  const JsonPath merges_at = where.field("merges");
  if (!merges.is_array()) fail("{}: must be an array", merges_at.text);
  std::vector<std::pair<std::string, std::string>> pairs;
  pairs.reserve(merges.size());
  for (std::size_t rank = 0; rank < merges.size(); ++rank)
    pairs.push_back(parse_merge(merges[rank], merges_at.index(rank)));
  add_merges(pairs, merges_at);
  index_chars();
}

BpeModel::BpeModel(std::span<const std::optional<std::string>> tokens,
                   std::span<const std::pair<std::string, std::string>> merges,
                   const JsonPath& where) {
  if (tokens.size() > 0x10000000) fail("{}: {} tokens is too many", where.text, tokens.size());
  vocab_.reserve(tokens.size());
  for (std::size_t id = 0; id < tokens.size(); ++id)
    if (tokens[id]) add_token(*tokens[id], static_cast<Id>(id));
  add_merges(merges, where.field("merges"));
  index_chars();
}

void BpeModel::add_token(std::string token, Id id) {
  tokens_by_id_.insert_or_assign(id, token);
  vocab_.emplace(std::move(token), id);
  id_end_ = std::max<std::size_t>(id_end_, std::size_t{id} + 1);
}

void BpeModel::index_chars() {
  char_ids_.assign(kCharTableSize, -1);
  std::string one;
  for (char32_t cp = 0; cp < kCharTableSize; ++cp) {
    one.clear();
    utf8::append(one, cp);
    if (const auto id = token_to_id(one)) char_ids_[cp] = *id;
  }
}

void BpeModel::add_merges(std::span<const std::pair<std::string, std::string>> merges,
                          const JsonPath& where) {
  merges_ = MergeTable(merges.size());
  const std::size_t prefix_length = continuing_subword_prefix_.size();
  for (std::size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    const auto left_id = token_to_id(left);
    const auto right_id = token_to_id(right);
    // The merged token drops the right part's continuing-subword prefix.
    const std::string merged =
        left + (prefix_length > 0 && right.starts_with(continuing_subword_prefix_)
                    ? right.substr(prefix_length)
                    : right);
    const auto merged_id = token_to_id(merged);
    if (!left_id || !right_id || !merged_id)
      fail("{}: merge \"{} {}\" uses a token missing from the vocab", where.index(rank).text, left,
           right);
    // A repeated pair keeps its last rank, as the library's map collection does.
    merges_.insert_or_assign(*left_id, *right_id, {static_cast<std::uint32_t>(rank), *merged_id});
  }
}

std::optional<BpeModel::Id> BpeModel::token_to_id(std::string_view token) const {
  const auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

const std::string* BpeModel::id_to_token(Id id) const {
  const auto it = tokens_by_id_.find(id);
  return it == tokens_by_id_.end() ? nullptr : &it->second;
}

void BpeModel::tokenize(std::string_view word, std::vector<Id>& out) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    if (const auto id = token_to_id(word)) {
      out.push_back(*id);
      return;
    }
  }
  if (cache_.lookup(word, out)) return;
  std::vector<Id> ids = merge_word(word);
  out.insert(out.end(), ids.begin(), ids.end());
  if (word.size() < kMaxCachedWordBytes) cache_.store(word, std::move(ids));
}

std::vector<BpeModel::Id> BpeModel::merge_word(std::string_view word) const {
  // One symbol per character (or per byte with byte_fallback, or fused unk).
  struct Symbol {
    Id id;
    int prev;
    int next;
    bool removed;
  };
  std::vector<Symbol> symbols;
  symbols.reserve(word.size());
  auto add_symbol = [&](Id id) {
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({id, index - 1, index + 1, false});
  };
  std::optional<Id> pending_unk;
  std::string piece;
  const bool plain_chars = continuing_subword_prefix_.empty() && end_of_word_suffix_.empty();
  for (std::size_t pos = 0; pos < word.size();) {
    const auto [code_point, length] = utf8::decode_at(word, pos);
    if (plain_chars && code_point < kCharTableSize && char_ids_[code_point] >= 0 && !pending_unk) {
      add_symbol(static_cast<Id>(char_ids_[code_point]));
      pos += length;
      continue;
    }
    const bool is_first = pos == 0;
    const bool is_last = pos + length == word.size();
    piece.clear();
    if (!is_first) piece += continuing_subword_prefix_;
    piece.append(word.substr(pos, length));
    if (is_last) piece += end_of_word_suffix_;
    pos += length;

    if (const auto id = token_to_id(piece)) {
      if (pending_unk) add_symbol(*std::exchange(pending_unk, std::nullopt));
      add_symbol(*id);
      continue;
    }
    if (byte_fallback_) {
      std::vector<Id> bytes;
      for (const char c : piece) {
        if (auto id = token_to_id(fmt::format("<0x{:02X}>", static_cast<unsigned char>(c))))
          bytes.push_back(*id);
      }
      if (bytes.size() == piece.size()) {
        for (const Id id : bytes) add_symbol(id);
        continue;
      }
    }
    if (unk_token_) {
      const auto unk_id = token_to_id(*unk_token_);
      if (!unk_id) fail("tokenizer: unk_token '{}' is not in the vocabulary", *unk_token_);
      if (pending_unk && !fuse_unk_) add_symbol(*pending_unk);
      pending_unk = *unk_id;
    }
  }
  if (pending_unk) add_symbol(*pending_unk);
  if (!symbols.empty()) symbols.back().next = -1;

  // Lowest rank first, leftmost among equal ranks (the library's heap order).
  struct Candidate {
    std::uint32_t rank;
    int pos;
    Id result;
    bool operator>(const Candidate& o) const {
      return rank != o.rank ? rank > o.rank : pos > o.pos;
    }
  };
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> queue;
  auto consider = [&](int left) {
    const int right = symbols[left].next;
    if (right < 0) return;
    if (const auto merge = merges_.find(symbols[left].id, symbols[right].id))
      queue.push({merge->rank, left, merge->result});
  };
  for (int i = 0; i + 1 < static_cast<int>(symbols.size()); ++i) consider(i);

  while (!queue.empty()) {
    const Candidate top = queue.top();
    queue.pop();
    Symbol& left = symbols[top.pos];
    if (left.removed || left.next < 0) continue;
    const int right_index = left.next;
    const auto merge = merges_.find(left.id, symbols[right_index].id);
    if (!merge || merge->result != top.result) continue;  // stale entry
    left.id = top.result;
    symbols[right_index].removed = true;
    left.next = symbols[right_index].next;
    if (left.next >= 0) symbols[left.next].prev = top.pos;
    if (left.prev >= 0) consider(left.prev);
    consider(top.pos);
  }

  std::vector<Id> ids;
  for (const Symbol& s : symbols)
    if (!s.removed) ids.push_back(s.id);
  return ids;
}

}  // namespace glmrt::text
