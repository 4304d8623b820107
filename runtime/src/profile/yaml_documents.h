// How many YAML documents a text holds, asked of yaml-cpp without YAML::LoadAll:
// on some malformed texts (found by the profile fuzz target, e.g. a run of
// empty quoted scalars with an anchor in it) yaml-cpp 0.7's parser stops
// advancing and keeps reporting one more document, so LoadAll never returns.
#pragma once

#include <yaml-cpp/mark.h>

#include <optional>
#include <string>

namespace glmrt::yaml_strict {

/// Where a second document's content begins, if the text holds more than one
/// (nothing if it holds one or none). Asks the parser for two documents at most.
/// Throws what yaml-cpp throws for text it cannot parse.
std::optional<YAML::Mark> second_document(const std::string& text);

}  // namespace glmrt::yaml_strict
