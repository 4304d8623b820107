// Streaming text through a marker that may arrive split across pieces: the
// longest end of the text that could still grow into `marker` is held back
// until the next piece decides. Shared by the stop-string filter and the
// <think> / <tool_call> splitters.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string_view>

namespace glmrt::serve {

/// Bytes at the end of `text` that are a proper prefix of `marker`.
inline size_t partial_marker_length(std::string_view text, std::string_view marker) {
  const size_t longest = std::min(text.size(), marker.size() - (marker.empty() ? 0 : 1));
  for (size_t n = longest; n > 0; --n)
    if (text.ends_with(marker.substr(0, n))) return n;
  return 0;
}

}  // namespace glmrt::serve
