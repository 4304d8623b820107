// Option parsing shared by every command.
#pragma once

#include "commands.h"

#include <boost/program_options.hpp>

#include <optional>
#include <string_view>

namespace glmrt::cli {

/// --model's help: what a model is, wherever a command takes one.
inline constexpr const char* kModelHelp =
    "the model: a folder (config.json with safetensors or a glmrt container) or a GGUF file "
    "(a split model's first shard, or the folder holding its shards); default: the profile's "
    "`model`";

/// Parses `args` against `options` and checks required ones. After --help it
/// prints the options and returns nothing: the command then exits 0.
std::optional<boost::program_options::variables_map> parse_options(
    const Args& args, const boost::program_options::options_description& options);

/// True when `name` was given on the command line (its default does not count).
bool given(const boost::program_options::variables_map& vm, std::string_view name);

/// Refuses `--a` and `--b` together, naming both: one of them would be ignored
/// or contradict the other. Names are without the leading "--".
void refuse_together(const boost::program_options::variables_map& vm, std::string_view command,
                     std::string_view a, std::string_view b);

/// Refuses `--flag` without `--needed`, naming both: alone it would be ignored.
void require_with(const boost::program_options::variables_map& vm, std::string_view command,
                  std::string_view flag, std::string_view needed);

}  // namespace glmrt::cli
