// A bound on how deeply a JSON document from outside may nest, checked on the
// text before it is parsed. nlohmann's parser is iterative, but everything
// that walks a parsed value afterwards (dump(), copies, comparisons, the chat
// template's printers) recurses once per level: a request nested ~30 000
// deep overflowed the stack. Header-only so the text library, which does not
// link the core, uses the same check.
#pragma once

#include <glmrt/base/error.h>

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt {

/// Far beyond any real config, tokenizer or tool schema (Python's json module
/// gives up near 1000), far below what recursion over it can afford.
inline constexpr int kMaxJsonNesting = 256;

/// Where a document first nests too deeply: the path of the value that opens
/// one level too many ("messages[1].tool_calls[0].function.arguments.a.a..."),
/// and the byte offset of its bracket.
struct JsonNestingExcess {
  std::string path;
  std::size_t offset = 0;
};

namespace json_nesting_detail {

/// One open array or object while scanning: where inside it the scan is.
struct OpenContainer {
  bool object = false;
  bool expecting_key = false;  // objects: the next string is a key
  std::size_t index = 0;       // arrays: the element being read
  std::string key;             // objects: the member being read
};

// The path shows the outermost levels (they say which field of the document
// it is) and elides the rest.
inline std::string path_of(const std::vector<OpenContainer>& open) {
  constexpr std::size_t kShownLevels = 8;
  std::string path;
  for (std::size_t level = 0; level < open.size() && level < kShownLevels; ++level) {
    const OpenContainer& c = open[level];
    if (c.object) {
      if (!path.empty()) path.push_back('.');
      path.append(c.key);
    } else {
      path.push_back('[');
      path.append(std::to_string(c.index));
      path.push_back(']');
    }
  }
  if (open.size() > kShownLevels) path += "...";
  return path;
}

}  // namespace json_nesting_detail

/// Scans `text` as JSON tokens (without building anything) and returns where
/// arrays and objects first nest deeper than `max_depth`, or nothing. Text
/// that is not JSON is left to the parser to report.
inline std::optional<JsonNestingExcess> find_excess_json_nesting(std::string_view text,
                                                                 int max_depth = kMaxJsonNesting) {
  using json_nesting_detail::OpenContainer;
  constexpr std::size_t kLongestKeyShown = 64;
  std::vector<OpenContainer> open;
  bool in_string = false, escaped = false, capturing_key = false;
  std::string key;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
        if (capturing_key) open.back().key = key;
      }
      if (in_string && capturing_key && key.size() < kLongestKeyShown) key.push_back(c);
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        capturing_key = !open.empty() && open.back().object && open.back().expecting_key;
        key.clear();
        break;
      case '{':
      case '[':
        if (open.size() >= static_cast<std::size_t>(max_depth))
          return JsonNestingExcess{json_nesting_detail::path_of(open), i};
        open.push_back({c == '{', c == '{', 0, {}});
        break;
      case '}':
      case ']':
        if (!open.empty()) open.pop_back();
        break;
      case ':':
        if (!open.empty()) open.back().expecting_key = false;
        break;
      case ',':
        if (!open.empty()) {
          if (open.back().object)
            open.back().expecting_key = true;
          else
            ++open.back().index;
        }
        break;
      default:
        break;
    }
  }
  return std::nullopt;
}

/// Throws glmrt::Error "SOURCE: `PATH` nests deeper than N levels ..." when
/// `text` does; `source` names the file or field the text came from.
inline void require_json_nesting_within(std::string_view text, std::string_view source,
                                        int max_depth = kMaxJsonNesting) {
  const auto excess = find_excess_json_nesting(text, max_depth);
  if (!excess) return;
  const std::string where =
      excess->path.empty() ? std::string("the document") : "`" + excess->path + "`";
  fail("{}: {} nests arrays and objects more than {} levels deep (at byte {}); expected at most {}",
       source, where, max_depth, excess->offset, max_depth);
}

}  // namespace glmrt
