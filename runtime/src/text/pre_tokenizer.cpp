#include "pre_tokenizer.h"

#include <algorithm>
#include <utility>

#include "byte_level.h"
#include "regex.h"
#include "utf8.h"

namespace glmrt::text {

namespace {

// What happens to the matched delimiters (Hugging Face SplitDelimiterBehavior).
enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };

Behavior parse_behavior(const Json& spec, const JsonPath& where) {
  const std::string name = require_string(spec, "behavior", where);
  if (name == "Removed") return Behavior::kRemoved;
  if (name == "Isolated") return Behavior::kIsolated;
  if (name == "MergedWithPrevious") return Behavior::kMergedWithPrevious;
  if (name == "MergedWithNext") return Behavior::kMergedWithNext;
  if (name == "Contiguous") return Behavior::kContiguous;
  fail("{}: unsupported split behavior '{}'", where.text, name);
}

struct Segment {
  Span span;
  bool is_match;
};

// The whole piece as alternating non-match / match segments.
std::vector<Segment> segments_of(std::size_t length, const std::vector<Span>& matches) {
  std::vector<Segment> segments;
  std::size_t previous = 0;
  for (const Span& m : matches) {
    if (previous != m.begin) segments.push_back({{previous, m.begin}, false});
    segments.push_back({m, true});
    previous = m.end;
  }
  if (previous != length) segments.push_back({{previous, length}, false});
  return segments;
}

// Applies `behavior` (as the library's NormalizedString::split does) and
// appends the non-empty resulting pieces to `out`.
void split_piece(std::string_view piece, std::vector<Segment> segments, Behavior behavior,
                 std::vector<std::string>& out) {
  std::vector<Segment> kept;  // is_match here means "remove"
  switch (behavior) {
    case Behavior::kIsolated:
      for (auto s : segments) kept.push_back({s.span, false});
      break;
    case Behavior::kRemoved:
      kept = std::move(segments);
      break;
    case Behavior::kContiguous: {
      bool previous_match = false;
      for (const auto& s : segments) {
        if (s.is_match == previous_match && !kept.empty()) {
          kept.back().span.end = s.span.end;
        } else {
          kept.push_back({s.span, false});
        }
        previous_match = s.is_match;
      }
      break;
    }
    case Behavior::kMergedWithPrevious: {
      bool previous_match = false;
      for (const auto& s : segments) {
        if (s.is_match && !previous_match && !kept.empty()) {
          kept.back().span.end = s.span.end;
        } else {
          kept.push_back({s.span, false});
        }
        previous_match = s.is_match;
      }
      break;
    }
    case Behavior::kMergedWithNext: {
      bool previous_match = false;
      for (auto it = segments.rbegin(); it != segments.rend(); ++it) {
        if (it->is_match && !previous_match && !kept.empty()) {
          kept.back().span.begin = it->span.begin;
        } else {
          kept.push_back({it->span, false});
        }
        previous_match = it->is_match;
      }
      std::reverse(kept.begin(), kept.end());
      break;
    }
  }
  for (const auto& s : kept) {
    if (s.is_match || s.span.begin == s.span.end) continue;
    out.emplace_back(piece.substr(s.span.begin, s.span.end - s.span.begin));
  }
}

class Split final : public PreTokenizer {
 public:
  Split(const Json& spec, const JsonPath& where)
      : regex_(pattern_as_regex(spec, where), where.text),
        behavior_(parse_behavior(spec, where)),
        invert_(optional_value(spec, "invert", false, where)) {}

  void pre_tokenize(std::vector<std::string>& pieces) const override {
    std::vector<std::string> out;
    out.reserve(pieces.size() * 4);
    for (const std::string& piece : pieces) {
      auto segments = segments_of(piece.size(), regex_.find_all(piece));
      if (invert_)
        for (auto& s : segments) s.is_match = !s.is_match;
      split_piece(piece, std::move(segments), behavior_, out);
    }
    pieces = std::move(out);
  }

 private:
  Regex regex_;
  Behavior behavior_;
  bool invert_;
};

// The GPT-2 pre-tokenization regex, used by ByteLevelPreTokenizer when use_regex is set.
constexpr std::string_view kGpt2Pattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

class ByteLevelPreTokenizer final : public PreTokenizer {
 public:
  ByteLevelPreTokenizer(const Json& spec, const JsonPath& where)
      : add_prefix_space_(optional_value(spec, "add_prefix_space", true, where)) {
    if (optional_value(spec, "use_regex", true, where))
      regex_ = std::make_unique<Regex>(kGpt2Pattern, where.text + " (GPT-2 regex)");
  }

  void pre_tokenize(std::vector<std::string>& pieces) const override {
    std::vector<std::string> split;
    split.reserve(pieces.size());
    for (std::string& piece : pieces) {
      if (add_prefix_space_ && (piece.empty() || piece.front() != ' ')) {
        std::string prefixed(1, ' ');
        prefixed.append(piece);
        piece.swap(prefixed);
      }
      if (regex_) {
        auto segments = segments_of(piece.size(), regex_->find_all(piece));
        split_piece(piece, std::move(segments), Behavior::kIsolated, split);
      } else if (!piece.empty()) {
        split.push_back(std::move(piece));
      }
    }
    const ByteLevelAlphabet& alphabet = byte_level_alphabet();
    pieces.clear();
    for (const std::string& piece : split) {
      std::string mapped;
      mapped.reserve(piece.size() * 2);
      alphabet.encode(piece, mapped);
      pieces.push_back(std::move(mapped));
    }
  }

 private:
  bool add_prefix_space_;
  std::unique_ptr<Regex> regex_;
};

// Splits out numeric characters, one by one or in runs.
class Digits final : public PreTokenizer {
 public:
  explicit Digits(bool individual) : individual_(individual) {}

  void pre_tokenize(std::vector<std::string>& pieces) const override {
    std::vector<std::string> out;
    for (const std::string& piece : pieces) {
      std::vector<Span> matches;
      for (std::size_t pos = 0; pos < piece.size();) {
        const auto [cp, length] = utf8::decode_at(piece, pos);
        if (utf8::is_numeric(cp)) matches.push_back({pos, pos + length});
        pos += length;
      }
      split_piece(piece, segments_of(piece.size(), matches),
                  individual_ ? Behavior::kIsolated : Behavior::kContiguous, out);
    }
    pieces = std::move(out);
  }

 private:
  bool individual_;
};

class PreTokenizerSequence final : public PreTokenizer {
 public:
  explicit PreTokenizerSequence(std::vector<std::unique_ptr<PreTokenizer>> steps)
      : steps_(std::move(steps)) {}
  void pre_tokenize(std::vector<std::string>& pieces) const override {
    for (const auto& step : steps_) step->pre_tokenize(pieces);
  }

 private:
  std::vector<std::unique_ptr<PreTokenizer>> steps_;
};

}  // namespace

std::unique_ptr<PreTokenizer> make_pre_tokenizer(const Json& spec, const JsonPath& where) {
  if (spec.is_null()) return nullptr;
  const std::string type = component_type(spec, where);
  if (type == "Split") return std::make_unique<Split>(spec, where);
  if (type == "ByteLevel") return std::make_unique<ByteLevelPreTokenizer>(spec, where);
  if (type == "Digits")
    return std::make_unique<Digits>(optional_value(spec, "individual_digits", false, where));
  if (type == "Sequence") {
    const Json& list = require(spec, "pretokenizers", where);
    if (!list.is_array()) fail("{}: 'pretokenizers' must be an array", where.text);
    std::vector<std::unique_ptr<PreTokenizer>> steps;
    for (std::size_t i = 0; i < list.size(); ++i) {
      auto step = make_pre_tokenizer(list[i], where.field("pretokenizers").index(i));
      if (step) steps.push_back(std::move(step));
    }
    return std::make_unique<PreTokenizerSequence>(std::move(steps));
  }
  fail("{}: unsupported pre_tokenizer type '{}'", where.text, type);
}

}  // namespace glmrt::text
