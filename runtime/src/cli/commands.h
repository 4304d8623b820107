// Every `glmrt <command>`: one function each, in its own file under src/cli/.
// `args` are the words after the command name (after `glmrt` alone for chat);
// the commands that run a model get the ranks mpirun started (ranks.h).
#pragma once

#include "ranks.h"

#include <string>
#include <vector>

namespace glmrt::cli {

using Args = std::vector<std::string>;

int run_command(const Args& args,
                const Ranks& ranks);  // run.cpp: generate from --prompt-ids / --prompt
int chat_command(const Args& args,
                 const Ranks& ranks);  // chat.cpp: conversation (also `glmrt --profile P`)
int validate_command(const Args& args,
                     const Ranks& ranks);    // validate.cpp: compare a profile with the oracle
int plugins_command(const Args& args);       // plugins.cpp: list / test plugins
int plugins_test_command(const Args& args);  // plugins_test.cpp: `plugins test PATH` conformance
int profile_command(const Args& args, const Ranks& ranks);  // profile.cpp: profile check FILE
int tokenize_command(const Args& args);                     // tokenize.cpp: text <-> token ids
int template_command(const Args& args);                     // template.cpp: render a chat request
int serve_command(const Args& args,
                  const Ranks& ranks);  // serve.cpp: the OpenAI-compatible HTTP server
int score_command(const Args& args,
                  const Ranks& ranks);  // score.cpp: log-likelihoods and perplexity
int bench_command(const Args& args,
                  const Ranks& ranks);     // bench.cpp: profiles side by side on one model
int make_model_command(const Args& args);  // make_model.cpp: write a random model
int convert_command(const Args& args);     // convert.cpp: checkpoint -> quantized container
int calibrate_command(const Args& args);   // calibrate.cpp: importance statistics of a text
int verify_command(const Args& args);      // verify.cpp: check a converted container
int stats_command(const Args& args);       // stats.cpp: expert usage history, trace replay

}  // namespace glmrt::cli
