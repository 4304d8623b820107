// Chat-template flags shared by `glmrt chat` and `glmrt run --chat`.
#pragma once

#include <glmrt/generate/conversation.h>

#include <boost/program_options.hpp>

namespace glmrt::cli {

/// --no-thinking, --reasoning-effort, --clear-thinking, --system.
boost::program_options::options_description chat_flags();

ChatOptions chat_options_from(const boost::program_options::variables_map& vm);

}  // namespace glmrt::cli
