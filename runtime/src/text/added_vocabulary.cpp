#include "added_vocabulary.h"

#include <algorithm>

#include "utf8.h"

namespace glmrt::text {

void TokenMatcher::add(std::string_view pattern, std::size_t value) {
  if (pattern.empty()) return;
  std::uint32_t node = 0;
  for (const char c : pattern) {
    const auto byte = static_cast<unsigned char>(c);
    const auto it = nodes_[node].children.find(byte);
    if (it != nodes_[node].children.end()) {
      node = it->second;
    } else {
      const auto next = static_cast<std::uint32_t>(nodes_.size());
      nodes_[node].children.emplace(byte, next);
      nodes_.emplace_back();
      node = next;
    }
  }
  if (!nodes_[node].value) nodes_[node].value = value;
  first_byte_[static_cast<unsigned char>(pattern.front())] = true;
}

std::vector<TokenMatcher::Match> TokenMatcher::find_all(std::string_view text,
                                                        const Accept& accept) const {
  std::vector<Match> matches;
  std::size_t start = 0;
  while (start < text.size()) {
    if (!first_byte_[static_cast<unsigned char>(text[start])]) {
      ++start;
      continue;
    }
    std::uint32_t node = 0;
    std::optional<Match> longest;
    for (std::size_t pos = start; pos < text.size(); ++pos) {
      const auto it = nodes_[node].children.find(static_cast<unsigned char>(text[pos]));
      if (it == nodes_[node].children.end()) break;
      node = it->second;
      const std::optional<std::size_t>& value = nodes_[node].value;
      if (value && (!accept || accept(start, pos + 1, *value)))
        longest = Match{start, pos + 1, *value};
    }
    if (longest) {
      matches.push_back(*longest);
      start = longest->end;
    } else {
      ++start;
    }
  }
  return matches;
}

namespace {

bool ends_with_word(std::string_view text) {
  if (text.empty()) return false;
  std::size_t start = text.size() - 1;
  while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
  return utf8::is_word_char(utf8::decode_at(text, start).code_point);
}

bool starts_with_word(std::string_view text) {
  return !text.empty() && utf8::is_word_char(utf8::decode_at(text, 0).code_point);
}

// Start of the run of white space that ends `text`.
std::size_t white_space_run_start(std::string_view text) {
  std::size_t end = text.size();
  while (end > 0) {
    std::size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    if (!utf8::is_white_space(utf8::decode_at(text, start).code_point)) break;
    end = start;
  }
  return end;
}

// Length of the run of white space that starts `text`.
std::size_t white_space_run_length(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const auto [cp, length] = utf8::decode_at(text, pos);
    if (!utf8::is_white_space(cp)) break;
    pos += length;
  }
  return pos;
}

// Whether [begin, end) overlaps one of the sorted ranges.
bool overlaps(std::span<const ByteRange> ranges, std::size_t begin, std::size_t end) {
  const auto after =
      std::upper_bound(ranges.begin(), ranges.end(), begin,
                       [](std::size_t at, const ByteRange& r) { return at < r.end; });
  return after != ranges.end() && after->begin < end;
}

}  // namespace

AddedVocabulary::AddedVocabulary(const Json& added_tokens, const BpeModel& model,
                                 const Normalizer* normalizer, const JsonPath& where) {
  if (added_tokens.is_null()) return;
  if (!added_tokens.is_array()) fail("{}: must be an array", where.text);
  const auto model_size = static_cast<Id>(model.vocab_entries());
  std::optional<Id> max_added;
  for (std::size_t i = 0; i < added_tokens.size(); ++i) {
    const Json& spec = added_tokens[i];
    const JsonPath at = where.index(i);
    AddedToken token;
    token.content = require_string(spec, "content", at);
    token.special = optional_value(spec, "special", false, at);
    token.single_word = optional_value(spec, "single_word", false, at);
    token.lstrip = optional_value(spec, "lstrip", false, at);
    token.rstrip = optional_value(spec, "rstrip", false, at);
    token.normalized = optional_value(spec, "normalized", !token.special, at);
    if (token.content.empty()) continue;
    if (const auto known = by_content(token.content)) {
      token.id = *known;
    } else if (const auto in_model = model.token_to_id(token.content)) {
      token.id = *in_model;
    } else {
      token.id =
          max_added && (*max_added >= model_size || model_size == 0) ? *max_added + 1 : model_size;
    }
    max_added = std::max(max_added.value_or(0), token.id);
    end_id_ = std::max(end_id_, token.id + 1);
    id_by_content_.insert_or_assign(token.content, token.id);
    if (const auto it = index_by_id_.find(token.id); it != index_by_id_.end()) {
      tokens_[it->second] = token;
    } else {
      index_by_id_.emplace(token.id, tokens_.size());
      tokens_.push_back(token);
    }
  }
  for (std::size_t i = 0; i < tokens_.size(); ++i) {
    const AddedToken& token = tokens_[i];
    if (!token.normalized) {
      raw_matcher_.add(token.content, i);
    } else {
      normalized_matcher_.add(normalizer ? normalizer->normalize(token.content) : token.content, i);
    }
  }
}

const AddedToken* AddedVocabulary::by_id(Id id) const {
  const auto it = index_by_id_.find(id);
  return it == index_by_id_.end() ? nullptr : &tokens_[it->second];
}

std::optional<AddedVocabulary::Id> AddedVocabulary::by_content(std::string_view content) const {
  const auto it = id_by_content_.find(content);
  if (it == id_by_content_.end()) return std::nullopt;
  return it->second;
}

std::vector<AddedVocabulary::Piece> AddedVocabulary::find(
    std::string_view text, std::size_t offset, const TokenMatcher& matcher,
    const TokenMatcher::Accept& accept) const {
  std::vector<Piece> pieces;
  std::size_t consumed = 0;
  for (const auto& match : matcher.find_all(text, accept)) {
    const AddedToken& token = tokens_[match.value];
    std::size_t begin = match.begin, end = match.end;
    if (token.single_word) {
      const bool space_before = begin == 0 || !ends_with_word(text.substr(0, begin));
      const bool space_after = end == text.size() || !starts_with_word(text.substr(end));
      if (!space_before || !space_after) continue;
    }
    if (token.lstrip) begin = std::max(white_space_run_start(text.substr(0, begin)), consumed);
    if (token.rstrip) end += white_space_run_length(text.substr(end));
    if (consumed < begin)
      pieces.push_back(
          {std::string(text.substr(consumed, begin - consumed)), {}, offset + consumed});
    pieces.push_back({std::string(text.substr(begin, end - begin)), token.id, offset + begin});
    consumed = end;
  }
  if (consumed < text.size())
    pieces.push_back({std::string(text.substr(consumed)), {}, offset + consumed});
  return pieces;
}

std::vector<AddedVocabulary::Piece> AddedVocabulary::split(
    std::string_view text, const Normalizer* normalizer,
    std::span<const ByteRange> plain_text) const {
  TokenMatcher::Accept raw_accept;
  if (!plain_text.empty())
    raw_accept = [&](std::size_t begin, std::size_t end, std::size_t value) {
      return !tokens_[value].special || !overlaps(plain_text, begin, end);
    };
  std::vector<Piece> pieces;
  for (Piece& raw : find(text, 0, raw_matcher_, raw_accept)) {
    if (raw.id) {
      pieces.push_back(std::move(raw));
      continue;
    }
    const std::string normalized = normalizer ? normalizer->normalize(raw.text) : raw.text;
    // Without a normalizer the offsets inside the piece are the text's; a
    // normalized piece that touches plain text matches no special token at all.
    TokenMatcher::Accept accept;
    if (!plain_text.empty())
      accept = [&](std::size_t begin, std::size_t end, std::size_t value) {
        if (!tokens_[value].special) return true;
        if (normalizer) return !overlaps(plain_text, raw.offset, raw.offset + raw.text.size());
        return !overlaps(plain_text, raw.offset + begin, raw.offset + end);
      };
    for (Piece& piece : find(normalized, raw.offset, normalized_matcher_, accept)) {
      if (normalizer) piece.offset = raw.offset;  // offsets of normalized text are not the input's
      if (!piece.text.empty()) pieces.push_back(std::move(piece));
    }
  }
  return pieces;
}

}  // namespace glmrt::text
