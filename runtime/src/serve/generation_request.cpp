#include <glmrt/serve/generation_request.h>
#include <glmrt/serve/response_format.h>

#include <glmrt/base/printable.h>

#include <charconv>
#include <limits>

namespace glmrt::serve {
namespace {

constexpr size_t kMaxStopStrings = 16;
constexpr size_t kMaxLogitBias = 300;  // OpenAI's limit
constexpr int64_t kMaxChoices = 8;

void refuse_unsupported(const RequestFields& f, Endpoint endpoint) {
  refuse_unknown_fields(f, endpoint);
  if (auto best = f.integer("best_of", 1, std::numeric_limits<int32_t>::max()); best && *best != 1)
    bad_request("best_of",
                "`best_of` must be 1: this server returns one choice per prompt (`n` asks for "
                "several)");
  if (endpoint == Endpoint::completions) {
    if (auto suffix = f.string("suffix"); suffix && !suffix->empty())
      bad_request("suffix", "`suffix` is not supported (no fill-in-the-middle)");
  }
}

// OpenAI's map of token id (a string) to a bias in [-100, 100] added to its
// logit; -100 bans the token.
std::vector<std::pair<int32_t, double>> read_logit_bias(const RequestFields& f,
                                                        const RequestContext& context) {
  const Json* bias = f.get("logit_bias");
  if (!bias || bias->is_null()) return {};
  if (!bias->is_object())
    bad_request("logit_bias", "`logit_bias` must be an object of token id -> bias, found {}",
                bias->type_name());
  if (bias->size() > kMaxLogitBias)
    bad_request("logit_bias", "`logit_bias` holds {} tokens; at most {} are allowed", bias->size(),
                kMaxLogitBias);
  std::vector<std::pair<int32_t, double>> biases;
  for (const auto& [key, value] : bias->items()) {
    int64_t id = -1;
    const auto [end, error] = std::from_chars(key.data(), key.data() + key.size(), id);
    if (error != std::errc() || end != key.data() + key.size() || id < 0 ||
        id >= context.vocab_size)
      bad_request("logit_bias", "`logit_bias` key `{}` is not a token id of this model (0..{})",
                  printable(key, 32), context.vocab_size - 1);
    if (!value.is_number() || !(value.get<double>() >= -100 && value.get<double>() <= 100))
      bad_request("logit_bias", "`logit_bias[\"{}\"]` must be a number in [-100, 100], found {}",
                  key, printable(value.dump(), 32));
    biases.emplace_back(static_cast<int32_t>(id), value.get<double>());
  }
  return biases;
}

std::vector<std::string> read_stop(const RequestFields& f) {
  const Json* stop = f.get("stop");
  if (!stop) return {};
  std::vector<std::string> stops;
  if (stop->is_string()) {
    stops.push_back(stop->get<std::string>());
  } else if (stop->is_array()) {
    if (stop->size() > kMaxStopStrings)
      bad_request("stop", "`stop` holds {} strings; at most {} are allowed", stop->size(),
                  kMaxStopStrings);
    for (const Json& s : *stop) {
      if (!s.is_string()) bad_request("stop", "`stop` must be a string or a list of strings");
      stops.push_back(s.get<std::string>());
    }
  } else {
    bad_request("stop", "`stop` must be a string or a list of strings, found {}",
                stop->type_name());
  }
  for (const std::string& s : stops)
    if (s.empty()) bad_request("stop", "`stop` strings must not be empty");
  return stops;
}

int read_max_tokens(const RequestFields& f, Endpoint endpoint, const RequestContext& context) {
  const int64_t limit = max_tokens_limit(context);
  const int64_t least = endpoint == Endpoint::chat ? 1 : 0;
  // max_completion_tokens replaced max_tokens in OpenAI's chat API; both are read.
  std::optional<int64_t> asked;
  for (const char* key : {"max_tokens", "max_completion_tokens"}) {
    const Json* given = f.get(key);
    if (given && given->is_number() && given->get<double>() > static_cast<double>(limit))
      bad_request(key, "`{}` is {}, more than this server allows ({}; see --max-tokens)", key,
                  printable(given->dump(), 32), limit);
    if (const auto value = f.integer(key, least, limit)) asked = value;
  }
  // None asked: until the end of the turn (a stop token) or a full context,
  // as llama-server, vLLM and Ollama answer; --max-tokens still caps it.
  return static_cast<int>(asked.value_or(limit));
}

}  // namespace

int64_t max_tokens_limit(const RequestContext& context) {
  return context.limits.max_tokens > 0 ? context.limits.max_tokens : context.max_context;
}

GenerationRequest read_generation_request(const Json& body, Endpoint endpoint,
                                          const RequestContext& context) {
  const RequestFields f(body);
  refuse_unsupported(f, endpoint);
  GenerationRequest r;
  SamplingParams& p = r.sampling;
  p = context.defaults;
  if (auto v = f.number("temperature", 0, 2)) p.temperature = *v;
  if (auto v = f.number("top_p", 0, 1)) {
    if (*v <= 0) bad_request("top_p", "`top_p` must be in (0, 1], found 0");
    p.top_p = *v;
  }
  if (auto v = f.integer("top_k", -1, 1 << 30)) p.top_k = *v < 0 ? 0 : static_cast<int>(*v);
  if (auto v = f.number("min_p", 0, 1)) {
    if (*v >= 1) bad_request("min_p", "`min_p` must be in [0, 1), found 1");
    p.min_p = *v;
  }
  if (auto v = f.number("presence_penalty", -2, 2)) p.presence_penalty = *v;
  if (auto v = f.number("frequency_penalty", -2, 2)) p.frequency_penalty = *v;
  if (auto v = f.number("repetition_penalty", 0, 10)) {
    if (*v <= 0) bad_request("repetition_penalty", "`repetition_penalty` must be > 0, found 0");
    p.repetition_penalty = *v;
  }
  // A negative seed would wrap to a huge one: refused, not reinterpreted.
  const auto seed = f.integer("seed", 0, std::numeric_limits<int64_t>::max());
  p.seed = seed ? static_cast<uint64_t>(*seed) : context.fresh_seed;
  p.max_new_tokens = read_max_tokens(f, endpoint, context);
  r.stop = read_stop(f);
  r.stream = f.boolean("stream").value_or(false);
  r.ignore_eos = f.boolean("ignore_eos").value_or(false);
  r.skip_special_tokens = f.boolean("skip_special_tokens").value_or(true);
  r.n = static_cast<int>(f.integer("n", 1, kMaxChoices).value_or(1));
  p.logit_bias = read_logit_bias(f, context);
  r.json_format = read_response_format(f);
  if (const Json* options = f.get("stream_options")) {
    if (!options->is_object())
      bad_request("stream_options", "`stream_options` must be an object, found {}",
                  options->type_name());
    for (const auto& [key, value] : options->items())
      if (key != "include_usage" && !value.is_null())
        bad_request("stream_options",
                    "`stream_options.{}` is not supported (it would be ignored): "
                    "`stream_options` has `include_usage` only",
                    printable(key, 64));
    r.include_usage =
        RequestFields(*options, "stream_options.").boolean("include_usage").value_or(false);
  }
  return r;
}

}  // namespace glmrt::serve
