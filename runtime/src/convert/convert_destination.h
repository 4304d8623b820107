// Where a conversion may write and what it may remove. The output and its
// `.partial` sibling must be apart from the source (not the source, not inside
// it, not holding it; paths compared with symlinks resolved), and --force
// replaces only what an earlier conversion wrote: a container is a folder
// whose marker file (kContainerMarkerFile) lists every file convert put there,
// and a folder holding anything else is refused, even with --force, naming
// what is in the way.
#pragma once

#include <glmrt/convert/convert_options.h>
#include <glmrt/model_files/safetensors.h>

#include <filesystem>
#include <string>
#include <vector>

namespace glmrt {

/// Files besides the weights that a model folder carries over.
inline constexpr const char* kCarriedFiles[] = {"tokenizer.json",
                                                "tokenizer_config.json",
                                                "special_tokens_map.json",
                                                "chat_template.jinja",
                                                "generation_config.json",
                                                "tokenizer.model",
                                                "added_tokens.json",
                                                "vocab.json",
                                                "merges.txt"};

/// True for a name glmrt convert gives a file it writes (shards, index,
/// carried files, checksums, marker, config, state).
bool is_conversion_file_name(const std::string& name);

/// `to` made absolute with symlinks resolved: the folder that is written.
std::filesystem::path resolved_output(const std::filesystem::path& to);

/// Throws unless `out` and `partial` are apart from the source folder, every
/// one of `source`'s files and the --importance statistics of `o`.
void check_apart_from_source(const ConvertOptions& o, const TensorDirectory& source,
                             const std::filesystem::path& out,
                             const std::filesystem::path& partial);

/// Throws unless `out` may become the new container: absent, an empty
/// folder, or (with `force`) a container whose marker lists all it holds.
void check_replaceable_output(const std::filesystem::path& out, bool force);

/// Removes `out` as check_replaceable_output allowed (the files its marker
/// lists, then the folder, which must then be empty).
void remove_replaced_output(const std::filesystem::path& out);

/// The marker's text for a container holding `files` (the marker aside).
std::string container_marker(const std::vector<std::string>& files);

}  // namespace glmrt
