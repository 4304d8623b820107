// Option parsing shared by every command.
#pragma once

#include "commands.h"

#include <boost/program_options.hpp>

#include <optional>

namespace glmrt::cli {

/// Parses `args` against `options` and checks required ones. After --help it
/// prints the options and returns nothing: the command then exits 0.
std::optional<boost::program_options::variables_map> parse_options(
    const Args& args, const boost::program_options::options_description& options);

}  // namespace glmrt::cli
