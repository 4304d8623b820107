#include <glmrt/serve/chat_answer.h>
#include <glmrt/serve/completion_jobs.h>
#include <glmrt/serve/logprobs_json.h>

#include <algorithm>
#include <chrono>
#include <optional>

namespace glmrt::serve {
namespace {

// Builds the chunks of one streamed chat completion.
class ChatChunks {
 public:
  ChatChunks(const ResponseIdentity& identity, bool include_usage)
      : identity_(identity), include_usage_(include_usage) {}

  Json chunk(size_t index, Json delta, Json logprobs = nullptr, Json finish = nullptr,
             Json timings = nullptr) const {
    Json choice = {{"index", index},
                   {"delta", std::move(delta)},
                   {"logprobs", std::move(logprobs)},
                   {"finish_reason", std::move(finish)}};
    Json c = {{"id", identity_.id},
              {"object", "chat.completion.chunk"},
              {"created", identity_.created},
              {"model", identity_.model},
              {"choices", Json::array({std::move(choice)})}};
    if (include_usage_) c["usage"] = nullptr;
    if (!timings.is_null()) c["timings"] = std::move(timings);
    return c;
  }

  Json usage(Json usage) const {
    return {{"id", identity_.id},           {"object", "chat.completion.chunk"},
            {"created", identity_.created}, {"model", identity_.model},
            {"choices", Json::array()},     {"usage", std::move(usage)}};
  }

 private:
  const ResponseIdentity& identity_;
  bool include_usage_;
};

Json delta_json(const ChatDelta& d) {
  Json delta = Json::object();
  if (!d.reasoning.empty()) delta["reasoning_content"] = d.reasoning;
  if (!d.content.empty()) delta["content"] = d.content;
  return delta;
}

Json tool_calls_json(const std::vector<ToolCall>& calls, IdSource& ids, bool with_index) {
  Json list = Json::array();
  for (size_t i = 0; i < calls.size(); ++i) {
    // Kimi-K2 writes each call's id (functions.NAME:N); other formats none.
    Json call = {{"id", calls[i].id.empty() ? ids.next("call_") : calls[i].id},
                 {"type", "function"},
                 {"function", {{"name", calls[i].name}, {"arguments", calls[i].arguments}}}};
    if (with_index) call["index"] = i;
    list.push_back(std::move(call));
  }
  return list;
}

}  // namespace

namespace {

// A forced call the model did not complete as one (cut by max_tokens, or
// malformed): still a call, as tool_choice asked, with the arguments it
// wrote so far. Its function is the one tool_choice names (the prompt ends
// with its name: whatever the model wrote next is not part of it); for
// "required", the one the text names when it is a tool, else the first tool.
ToolCall forced_call_fallback(const ChatRequest& request, const ToolCallSyntax& syntax,
                              std::string_view held) {
  std::string name = request.forced_function;
  if (name.empty()) {
    const std::string named = syntax.named_function(held);
    bool known = false;
    for (const Json& entry : request.tools) {
      const Json& tool =
          entry.is_object() && entry.contains("function") ? entry["function"] : entry;
      if (!tool.is_object() || !tool.contains("name") || !tool["name"].is_string()) continue;
      if (name.empty()) name = tool["name"].get<std::string>();
      known = known || tool["name"] == named;
    }
    if (known) name = named;
  }
  return ToolCall{{}, name, syntax.partial_arguments(held, name, request.tools)};
}

struct ChoiceOutcome {
  Json choice;  // the non-streamed choice
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
  Timings timings;
};

// Choice `index` of the request: its own seed (the request's plus the index,
// so choice 0 is what n = 1 answers), streamed as it goes when asked.
std::optional<ChoiceOutcome> run_choice(const ChatRequest& request, size_t index,
                                        const ChatChunks& chunks, const ServedModel& model,
                                        IdSource& ids, ModelContext& context, Job& job) {
  const auto prompt_start = std::chrono::steady_clock::now();
  HeldSlot slot(context, request.prompt, request.generation.sampling.max_new_tokens);
  ChoiceOutcome outcome;
  const bool stream = request.generation.stream;
  // Sent once the prompt ran (with its first token), as a client expects.
  bool role_sent = false;
  const auto send_role = [&] {
    if (stream && !role_sent)
      job.send(sse_event(chunks.chunk(index, {{"role", "assistant"}, {"content", ""}})));
    role_sent = true;
  };

  SamplingParams sampling = request.generation.sampling;
  sampling.seed += index;
  const GenerationLimits limits{sampling.max_new_tokens,
                                stop_tokens(request.generation, model, Endpoint::chat)};
  Sampler sampler(sampling, json_constraint(request.generation.json_format, *model.token_trie,
                                            limits.stop_tokens));
  const ToolCallSyntax& tool_syntax = *model.tool_calls;
  ChatAnswer answer(model.tokenizer, request.generation.stop, request.thinking, request.tools,
                    request.generation.skip_special_tokens, tool_syntax);
  // A forced call's opening is in the prompt: the parser reads it first.
  if (!request.forced_answer.empty())
    for (text::TokenId id : model.tokenizer.encode(request.forced_answer, false))
      answer.push(static_cast<int32_t>(id));
  Json logprobs = Json::array();  // all of them (non-streamed) or those not sent yet
  TokenTimer timer(context.metrics, job.queued_at());
  const BatchScheduler::Outcome run = context.scheduler.generate(
      {slot.session(), sampler, request.prompt, limits,
       [&](int32_t token, std::span<const float> logits) {
         timer.token();
         send_role();
         if (request.top_logprobs >= 0)
           logprobs.push_back(
               chat_logprob(score_logits(logits, token, request.top_logprobs), model.tokenizer));
         const ChatDelta delta = answer.push(token);
         if (stream && !delta.empty()) {
           Json lp = logprobs.empty() ? Json(nullptr) : Json{{"content", std::move(logprobs)}};
           logprobs = Json::array();
           job.send(sse_event(chunks.chunk(index, delta_json(delta), std::move(lp))));
         }
         return !answer.stopped_by_string() && !job.cancelled();
       },
       [&] { return job.cancelled(); },
       request.top_logprobs >= 0 ? LogitsNeed::every_token : LogitsNeed::when_decoded});
  const Generation& generation = run.generation;
  job.add_generated(static_cast<int64_t>(generation.tokens.size()));
  if (job.cancelled()) return std::nullopt;
  send_role();
  outcome.timings.prompt_n = static_cast<int64_t>(request.prompt.size()) - run.reused;
  outcome.timings.prompt_ms =
      std::chrono::duration<double, std::milli>(run.prompt_done - prompt_start).count();
  outcome.timings.predicted_n = static_cast<int64_t>(generation.tokens.size());
  outcome.timings.predicted_ms = milliseconds_since(run.prompt_done);

  ChatAnswer::Ending ending = answer.finish();
  // parallel_tool_calls: false asks for one call at most: the first, as vLLM.
  if (!request.parallel_tool_calls && ending.calls.size() > 1) ending.calls.resize(1);
  std::string content = answer.content();
  if (request.forced_call && ending.calls.empty()) {
    // The held call text is not content: the call replaces it.
    const size_t opening = content.find(tool_syntax.opening());
    ending.calls.push_back(forced_call_fallback(
        request, tool_syntax, std::string_view(content).substr(std::min(opening, content.size()))));
    content = content.substr(0, opening);
    ending.delta.content =
        ending.delta.content.substr(0, ending.delta.content.find(tool_syntax.opening()));
  } else if (!request.forced_function.empty() &&
             ending.calls.front().name != request.forced_function) {
    // The model ran on after the name the prompt gave it (GLM writes no
    // separator after a name): the call is still to the named function.
    ending.calls.front().name = request.forced_function;
  }
  const std::string reason =
      finish_reason(generation.reason, answer.stopped_by_string(), !ending.calls.empty());
  outcome.completion_tokens = static_cast<int64_t>(generation.tokens.size());
  outcome.cached_tokens = run.reused;
  if (stream) {
    Json lp = logprobs.empty() ? Json(nullptr) : Json{{"content", std::move(logprobs)}};
    if (!ending.delta.empty() || !lp.is_null())
      job.send(sse_event(chunks.chunk(index, delta_json(ending.delta), std::move(lp))));
    if (!ending.calls.empty())
      job.send(sse_event(
          chunks.chunk(index, {{"tool_calls", tool_calls_json(ending.calls, ids, true)}})));
    job.send(
        sse_event(chunks.chunk(index, Json::object(), nullptr, reason, outcome.timings.json())));
    return outcome;
  }
  Json message = {{"role", "assistant"}};
  message["content"] = ending.calls.empty() || !content.empty() ? Json(content) : Json(nullptr);
  if (request.thinking) message["reasoning_content"] = answer.reasoning();
  if (!ending.calls.empty()) message["tool_calls"] = tool_calls_json(ending.calls, ids, false);
  outcome.choice = {{"index", index},
                    {"message", std::move(message)},
                    {"logprobs", request.top_logprobs >= 0 ? Json{{"content", std::move(logprobs)}}
                                                           : Json(nullptr)},
                    {"finish_reason", reason}};
  return outcome;
}

}  // namespace

void run_chat_completion(const ChatRequest& request, const ResponseIdentity& identity,
                         const ServedModel& model, IdSource& ids, ModelContext& context, Job& job) {
  const ChatChunks chunks(identity, request.generation.include_usage);
  Json choices = Json::array();
  int64_t completion_tokens = 0, cached_tokens = 0;
  Timings timings;
  for (size_t i = 0; i < static_cast<size_t>(request.generation.n); ++i) {
    auto outcome = run_choice(request, i, chunks, model, ids, context, job);
    if (!outcome) return;
    completion_tokens += outcome->completion_tokens;
    timings += outcome->timings;
    // The prompt is computed once; later choices find it cached.
    if (i == 0) cached_tokens = outcome->cached_tokens;
    choices.push_back(std::move(outcome->choice));
  }
  const Json usage =
      usage_json(static_cast<int64_t>(request.prompt.size()), completion_tokens, cached_tokens);
  if (request.generation.stream) {
    if (request.generation.include_usage) job.send(sse_event(chunks.usage(usage)));
    job.send_last(std::string(kSseDone));
    return;
  }
  const Json body = {
      {"id", identity.id},        {"object", "chat.completion"},   {"created", identity.created},
      {"model", identity.model},  {"choices", std::move(choices)}, {"usage", usage},
      {"timings", timings.json()}};
  job.send_last(body.dump(-1, ' ', false, Json::error_handler_t::replace));
}

}  // namespace glmrt::serve
