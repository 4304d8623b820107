// glmrt: the command-line entry. Dispatches to one function per command.
#include "commands.h"
#include "output_error.h"
#include "version.h"

#include <glmrt/base/error.h>
#include <glmrt/base/omp_wait_policy.h>
#include <glmrt/distributed/expert_cluster.h>
#include <glmrt/distributed/expert_worker.h>
#include <glmrt/distributed/fault_report.h>
#include <glmrt/distributed/mpi_world.h>

#include <signal.h>
#include <csignal>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <system_error>

namespace {

using glmrt::cli::Args;
using glmrt::cli::Ranks;

struct Command {
  std::string_view name;
  std::string_view summary;
  std::function<int(const Args&, const Ranks&)> run;
};

/// A command that runs no model: it runs on rank 0 alone.
template <int (*command)(const Args&)>
int on_rank0(const Args& args, const Ranks&) {
  return command(args);
}

const Command kCommands[] = {
    {"run", "generate a continuation of a prompt", glmrt::cli::run_command},
    {"chat", "talk with the model (also `glmrt --profile P` alone)", glmrt::cli::chat_command},
    {"validate", "compare a profile's outputs with a reference (the oracle)",
     glmrt::cli::validate_command},
    {"plugins", "list the plugins found, or test one", on_rank0<glmrt::cli::plugins_command>},
    {"profile", "check a profile file", glmrt::cli::profile_command},
    {"tokenize", "text on stdin to token ids (or back with --decode)",
     on_rank0<glmrt::cli::tokenize_command>},
    {"template", "render a chat request into the model's prompt",
     on_rank0<glmrt::cli::template_command>},
    {"serve", "an OpenAI-compatible HTTP server with a chat page", glmrt::cli::serve_command},
    {"score", "log-likelihoods of continuations, perplexity of a text", glmrt::cli::score_command},
    {"bench", "time profiles side by side on one model", glmrt::cli::bench_command},
    {"make-model", "write a random model with real dimensions (benchmarks, tests)",
     on_rank0<glmrt::cli::make_model_command>},
    {"convert", "a Hugging Face checkpoint into a quantized streaming container",
     on_rank0<glmrt::cli::convert_command>},
    {"calibrate", "activation statistics of a text, for convert --importance",
     on_rank0<glmrt::cli::calibrate_command>},
    {"verify", "check a converted container (checksums, headers, stamps)",
     on_rank0<glmrt::cli::verify_command>},
    {"stats", "expert usage history (summary, heatmap) and routing trace replay",
     on_rank0<glmrt::cli::stats_command>},
};

void print_usage() {
  std::fputs(
      "usage: glmrt <command> [options]\n       glmrt --profile P [--model DIR]  "
      "(chat)\n\ncommands:\n",
      stderr);
  for (const auto& c : kCommands)
    std::fprintf(stderr, "  %-10.*s %.*s\n", static_cast<int>(c.name.size()), c.name.data(),
                 static_cast<int>(c.summary.size()), c.summary.data());
  std::fputs(
      "\n`glmrt <command> --help` shows a command's options; `glmrt --version` the version.\n",
      stderr);
}

int run_command_line(const Args& args, const Ranks& ranks) {
  // `glmrt --profile P [--model DIR]`: no command word means chat.
  if (args[0].starts_with("--")) return glmrt::cli::chat_command(args, ranks);
  for (const auto& c : kCommands) {
    if (args[0] == c.name) return c.run(Args(args.begin() + 1, args.end()), ranks);
  }
  std::fprintf(stderr, "glmrt: unknown command '%s'\n", args[0].c_str());
  print_usage();
  return 2;
}

void block_shutdown_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigaddset(&set, SIGINT);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

/// The value of --model (or --model=DIR) among a command's words, if any:
/// an expert rank opens its own copy of the model there.
std::filesystem::path model_flag(const Args& args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--model" && i + 1 < args.size()) return args[i + 1];
    if (args[i].starts_with("--model=")) return args[i].substr(8);
  }
  return {};
}

}  // namespace

int main(int argc, char** argv) {
  // First: the OpenMP runtime read its environment before main, and idle
  // threads that spin starve the working ones on a busy machine.
  glmrt::restart_with_passive_omp_waiting(argv);
  // A reader that goes away (`glmrt ... | head`) makes writes fail with EPIPE
  // instead of killing the process, so the command stops through its normal
  // path (destructors run) and ends quietly; see output_error.h.
  std::signal(SIGPIPE, SIG_IGN);
  glmrt::cli::Args args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    print_usage();
    return args.empty() ? 2 : 0;
  }
  if (args[0] == "--version" || args[0] == "version") {
    const std::string_view version = glmrt::cli::version_text();
    std::printf("glmrt %.*s\n", static_cast<int>(version.size()), version.data());
    glmrt::cli::flush_output(stdout, "the output");
    return 0;
  }
  std::unique_ptr<glmrt::MpiWorld> world;  // outlives the cluster: a fault ends the job through it
  try {
    // Under mpirun with several ranks: rank 0 runs the command, the others
    // serve it their experts until it stops them (docs/distributed.md).
    if (glmrt::launched_as_several_ranks()) {
      // serve takes SIGTERM and SIGINT on a watcher thread of its own
      // (serve/shutdown_signals.h): MPI's threads, started next, must not
      // take them first.
      if (!args.empty() && args[0] == "serve") block_shutdown_signals();
      world = glmrt::MpiWorld::start(argc, argv);
      if (world->rank() != 0) return glmrt::run_expert_worker(*world, model_flag(args));
    }
    std::optional<glmrt::ExpertCluster> cluster;
    if (world) cluster.emplace(*world);
    const int status = run_command_line(args, cluster ? Ranks(*cluster) : Ranks());
    glmrt::cli::flush_output(stdout, "the output");
    cluster.reset();  // tells the ranks to stop
    // serve went on without a rank it lost: MPI_Finalize would wait for it.
    if (world && world->any_lost()) {
      std::fflush(stderr);
      world->abort_job(status);
    }
    return status;
  } catch (const glmrt::RankFault& e) {
    // MPI_Finalize would wait for the rank that is gone: end the job.
    std::fprintf(stderr, "glmrt: error: %s\n", e.what());
    std::fflush(stderr);
    if (world) world->abort_job(1);
    return 1;
  } catch (const glmrt::cli::OutputError& e) {
    return glmrt::cli::report_output_error(e);
  } catch (const std::system_error& e) {
    // fmt::print throws this when a write to stdout fails mid-way.
    if (std::ferror(stdout))
      return glmrt::cli::report_output_error(
          glmrt::cli::OutputError(e.code().value(), "the output"));
    std::fprintf(stderr, "glmrt: error: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "glmrt: error: %s\n", e.what());
    return 1;
  }
}
