// Chat-template flags shared by `glmrt chat` and `glmrt run --chat`, and the
// --chat-template choice every command that renders chat prompts takes.
#pragma once

#include <glmrt/generate/conversation.h>
#include <glmrt/text/chat_template_choice.h>

#include <boost/program_options.hpp>

namespace glmrt::cli {

/// --no-thinking, --reasoning-effort, --clear-thinking, --system.
boost::program_options::options_description chat_flags();

ChatOptions chat_options_from(const boost::program_options::variables_map& vm);

/// --chat-template model|builtin (run, chat, serve, template).
boost::program_options::options_description chat_template_flag();

/// The --chat-template choice, else `fallback` (the profile's `chat_template`).
text::ChatTemplateChoice chat_template_choice(const boost::program_options::variables_map& vm,
                                              text::ChatTemplateChoice fallback);

}  // namespace glmrt::cli
