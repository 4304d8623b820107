// glmrt serve: the OpenAI-compatible HTTP server with a chat page at `/`.
// Loads the model once, listens (127.0.0.1 unless told otherwise) and runs
// until SIGTERM or Ctrl-C, which stop it cleanly: no new requests, waiting
// ones answered 503, the running ones finished within --shutdown-grace.
#include "chat_flags.h"
#include "commands.h"
#include "options.h"
#include "sampling_flags.h"
#include "unsigned_flag.h"
#include "version.h"

#include <glmrt/base/byte_size.h>
#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>
#include <glmrt/distributed/fault_report.h>
#include <glmrt/engine/engine.h>
#include <glmrt/generate/model_text.h>
#include <glmrt/memory/memory_plan.h>
#include <glmrt/serve/access_policy.h>
#include <glmrt/serve/http_server.h>
#include <glmrt/serve/shutdown_signals.h>
#include <glmrt/serve/thread_ceiling.h>

#include <malloc.h>
#include <signal.h>
#include <unistd.h>

#include <fmt/format.h>
#include <boost/program_options.hpp>

#include <csignal>

namespace glmrt::cli {
namespace {

namespace po = boost::program_options;

po::options_description limit_flags(serve::ServeLimits& limits) {
  po::options_description flags("limits (a request beyond one gets the HTTP status shown)");
  // Byte counts are read as text: boost would wrap "-1" into 2^64-1, no limit at all.
  flags.add_options()(
      "max-body-bytes",
      po::value<std::string>()->default_value(std::to_string(limits.max_body_bytes)),
      "largest request body, however it is framed (413)")(
      "max-body-memory",
      po::value<std::string>()->default_value(std::to_string(limits.max_body_memory)),
      "request bodies held at once; 0 = 2 x --max-body-bytes (later ones wait)")(
      "max-queue", po::value(&limits.max_queue)->default_value(limits.max_queue),
      "requests that may wait while --parallel run (429 beyond)")(
      "max-messages", po::value(&limits.max_messages)->default_value(limits.max_messages),
      "chat messages per request (400)")(
      "max-tokens", po::value(&limits.max_tokens)->default_value(limits.max_tokens),
      "most tokens a request may ask to generate; 0 = memory.max_context (400)")(
      "max-batch", po::value(&limits.max_batch)->default_value(limits.max_batch),
      "prompts per /v1/completions request (400)");
  return flags;
}

}  // namespace

int serve_command(const Args& args, const Ranks& ranks) {
  serve::ServeOptions o;
  std::string profile_path, model_dir;
  po::options_description options("glmrt serve --profile P [--model MODEL] [--host H] [--port N]");
  options.add_options()("help,h", "show this help")("profile", po::value(&profile_path)->required(),
                                                    "profile YAML")("model", po::value(&model_dir),
                                                                    kModelHelp)(
      "host", po::value(&o.host)->default_value(o.host),
      "address to listen on (0.0.0.0 = every interface)")(
      "port", po::value(&o.port)->default_value(o.port), "port; 0 = any free one (printed)")(
      "api-key", po::value(&o.api_key), "require `Authorization: Bearer KEY` (401 without it)")(
      "cors", po::value(&o.cors_origin), "allow browsers on ORIGIN (or *) to call the API")(
      "allowed-host", po::value(&o.allowed_hosts)->composing(),
      "a Host name to answer besides loopback names and IP addresses (repeatable; * = any)")(
      "model-name", po::value(&o.model_name),
      "the model's name in the API (default: the folder's)")(
      "http-threads", po::value(&o.http_threads)->default_value(0),
      "requests answered at once; 0 = max-queue + parallel + 3 (at most 4096, and half of what "
      "the process "
      "limit or pids cgroup leaves)")(
      "parallel", po::value(&o.parallel)->default_value(o.parallel),
      "requests generating at once, decoded together (each holds a KV cache of max_context, "
      "which the memory plan counts); 0 = as many as the budget holds, at most 4")(
      "slots", po::value(&o.slots)->default_value(o.slots),
      "conversations kept in the KV cache (they share the --parallel sequences' memory); 0 = "
      "the profile's memory.kv_slots (auto: one per 256 tokens of max_context, at most 16), at "
      "least --parallel")("max-connections",
                          po::value(&o.max_connections)->default_value(o.max_connections),
                          "open connections, slow or idle ones included (503 beyond)")(
      "request-timeout",
      po::value(&o.request_timeout_seconds)->default_value(o.request_timeout_seconds),
      "seconds a request's head, then its body, may take to arrive (408)")(
      "idle-timeout", po::value(&o.idle_timeout_seconds)->default_value(o.idle_timeout_seconds),
      "seconds a connection may wait with no request under way")(
      "shutdown-grace",
      po::value(&o.shutdown_grace_seconds)->default_value(o.shutdown_grace_seconds),
      "seconds the running request may finish after SIGTERM")("quiet", "no access log on stderr")(
      "allow-special-in-content",
      "read special-token strings in message content as control tokens (default: as text)");
  options.add(limit_flags(o.limits)).add(sampling_flags()).add(chat_template_flag());
  // Before any other thread exists, so every thread inherits the blocked
  // SIGTERM/SIGINT and only the watcher takes them.
  serve::ShutdownSignals signals;
  // A client that disconnects mid-write must not kill the server.
  std::signal(SIGPIPE, SIG_IGN);
  const auto parsed = parse_options(args, options);
  if (!parsed) return 0;
  const po::variables_map& vm = *parsed;
  check_sampling_flags(vm);
  o.limits.max_body_bytes =
      parse_unsigned_flag("--max-body-bytes", vm["max-body-bytes"].as<std::string>());
  o.limits.max_body_memory =
      parse_unsigned_flag("--max-body-memory", vm["max-body-memory"].as<std::string>());
  if (o.port < 0 || o.port > 65535) fail("--port must be in 0..65535, got {}", o.port);
  // An empty key would silently turn authentication off.
  if (vm.count("api-key") && o.api_key.find_first_not_of(" \t") == std::string::npos)
    fail(
        "--api-key is empty: give the key clients must send as `Authorization: Bearer KEY`, or "
        "leave the flag out to serve without authentication");
  if (o.shutdown_grace_seconds < 0 || !(o.shutdown_grace_seconds < 1e6))
    fail("--shutdown-grace must be a number of seconds >= 0");
  // Before the model loads: a count the machine cannot start is refused at once.
  serve::check_http_threads(o);
  o.access_log = vm.count("quiet") == 0;
  o.allow_special_in_content = vm.count("allow-special-in-content") != 0;

  // Conversations' KV caches come and go in every size: with glibc's sliding
  // mmap threshold their freed blocks stayed in the heap, fragmented, and the
  // resident memory the slots' eviction measures never came down. A fixed
  // threshold maps each large block on its own and unmaps it when freed.
  mallopt(M_MMAP_THRESHOLD, 64 << 10);
  // One heap for every thread: with glibc's arena per thread, what a
  // request's thread or the model thread freed stayed resident in its own
  // arena, out of the others' reach, and the process at the plan's minimum
  // went 70-230 KiB past its budget in 8 of 11 runs (ServeSlotsMemory at
  // 1 MiB above it, the tokens' JSON on the request threads); with one arena
  // in 1 of 10, at the same throughput (small blocks come from each
  // thread's cache).
  mallopt(M_ARENA_MAX, 1);
  if (o.parallel < 0 || o.parallel > kMaxKvSequences)
    fail("--parallel must be in 0..{} (0 = what the memory plan allows), got {}", kMaxKvSequences,
         o.parallel);
  // Expert ranks exchange one sequence's rows at a time.
  if (ranks.count() > 1 && o.parallel > 1)
    fail("--parallel {}: under mpirun ({} ranks) requests run one at a time; give --parallel 1",
         o.parallel, ranks.count());
  if (ranks.count() > 1) o.parallel = 1;
  Profile profile = load_profile(profile_path);
  // Fewer conversation slots asked for (--slots, memory.kv_slots) than auto
  // would run at once: as many run as there are slots.
  const int asked_slots = o.slots > 0 ? o.slots : profile.kv_slots.value_or(0);
  if (o.parallel == 0 && asked_slots > 0 && asked_slots < kAutoKvSequences)
    o.parallel = asked_slots;
  // The memory plan counts a KV cache for each sequence decoded at once.
  profile.kv_sequences = o.parallel;
  // Before the model loads, which may take minutes.
  const ModelText model_text = ModelText::open(Engine::model_dir_for(profile, model_dir));
  // The tokenizer itself is built once the model is loaded: the process the
  // memory plan measures then is the one `profile check` plans for.
  model_text.require_tokenizer();
  const auto chat_template =
      model_text.chat_template(chat_template_choice(vm, profile.chat_template));
  auto engine = ranks.open(profile, model_dir);
  const auto shards = ranks.spread(*engine);
  o.build_info = std::string(version_text());
  if (o.model_name.empty()) {
    auto dir = std::filesystem::absolute(engine->model_dir()).lexically_normal();
    if (dir.filename().empty()) dir = dir.parent_path();  // a trailing slash
    o.model_name = dir.filename().empty() ? "glmrt" : dir.filename().string();
  }
  const SamplingParams defaults =
      apply_sampling_flags(resolve_sampling(engine->model_dir(), profile), vm);
  for (const std::string& warning :
       serve::access_warnings(o.host, !o.api_key.empty(), o.cors_origin))
    fmt::print(stderr, "glmrt serve: warning: {}\n", warning);
  serve::HttpServer server(*engine, chat_template, model_text.tokenizer(),
                           model_text.stop_ids(engine->model().config()), defaults, o);
  const int port = server.bind();
  signals.on_signal([&server] {
    fmt::print(stderr, "glmrt serve: stopping (signal received)\n");
    server.stop();
  });
  // A rank that died or stopped answering fails the request it served and
  // is left out: the others (every one has the model's files) run its
  // experts from then on. Only when they cannot does the server stop, as on
  // SIGTERM (every thread blocks it: the signal waits for the watcher).
  if (shards) {
    shards->serve_on_without_lost_ranks();
    shards->on_fault([] { ::kill(::getpid(), SIGTERM); });
  }
  fmt::print(stderr, "glmrt serve: {} on {} (model `{}`, profile {})\n",
             printable(engine->model_dir().string()), serve::listening_url(o.host, port),
             printable(o.model_name, 256), printable(profile_path));
  const MemoryPart* kv = engine->memory_plan().part(memory_part::kv);
  fmt::print(stderr,
             "glmrt serve: {} request{} generate{} at once (--parallel{}); the memory plan "
             "counts {} KV cache{} of {} tokens, {} in all\n",
             server.parallel(), server.parallel() == 1 ? "" : "s",
             server.parallel() == 1 ? "s" : "", o.parallel == 0 ? " auto" : "", server.parallel(),
             server.parallel() == 1 ? "" : "s", profile.max_context,
             format_byte_size(kv ? kv->bytes : 0));
  std::fflush(stderr);
  server.run();
  signals.stop_watching();  // the action above uses `server`
  fmt::print(stderr, "glmrt serve: stopped\n");
  if (shards && !shards->fault_message().empty()) throw RankFault(shards->fault_message());
  return 0;
}

}  // namespace glmrt::cli
