#include <glmrt/serve/chat_answer.h>
#include <glmrt/serve/completion_jobs.h>
#include <glmrt/serve/logprobs_json.h>

#include <limits>

namespace glmrt::serve {
namespace {

// Builds the chunks of one streamed chat completion.
class ChatChunks {
 public:
  ChatChunks(const ResponseIdentity& identity, bool include_usage)
      : identity_(identity), include_usage_(include_usage) {}

  Json chunk(Json delta, Json logprobs = nullptr, Json finish = nullptr) const {
    Json choice = {{"index", 0},
                   {"delta", std::move(delta)},
                   {"logprobs", std::move(logprobs)},
                   {"finish_reason", std::move(finish)}};
    Json c = {{"id", identity_.id},
              {"object", "chat.completion.chunk"},
              {"created", identity_.created},
              {"model", identity_.model},
              {"choices", Json::array({std::move(choice)})}};
    if (include_usage_) c["usage"] = nullptr;
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
    Json call = {{"id", ids.next("call_")},
                 {"type", "function"},
                 {"function", {{"name", calls[i].name}, {"arguments", calls[i].arguments}}}};
    if (with_index) call["index"] = i;
    list.push_back(std::move(call));
  }
  return list;
}

// Runs the prompt, checking between prefill chunks whether the client left.
std::optional<Session::ContextRun> run_prompt(ModelContext& context,
                                              std::span<const int32_t> prompt, Job& job) {
  try {
    return context.session.set_context(prompt, std::numeric_limits<int64_t>::max(),
                                       [&](int64_t, std::span<const float>) {
                                         if (job.cancelled()) throw ScoringCancelled();
                                       });
  } catch (const ScoringCancelled&) {
    return std::nullopt;
  }
}

}  // namespace

void run_chat_completion(const ChatRequest& request, const ResponseIdentity& identity,
                         const ServedModel& model, IdSource& ids, ModelContext& context, Job& job) {
  auto prompt_run = run_prompt(context, request.prompt, job);
  if (!prompt_run) return;
  const bool stream = request.generation.stream;
  const ChatChunks chunks(identity, request.generation.include_usage);
  if (stream) job.send(sse_event(chunks.chunk({{"role", "assistant"}, {"content", ""}})));

  Sampler sampler(request.generation.sampling);
  ChatAnswer answer(model.tokenizer, request.generation.stop, request.thinking, request.tools,
                    request.generation.skip_special_tokens);
  Json logprobs = Json::array();  // all of them (non-streamed) or those not sent yet
  const GenerationLimits limits{request.generation.sampling.max_new_tokens,
                                stop_tokens(request.generation, model, Endpoint::chat)};
  const Generation generation = continue_generation(
      context.session, sampler, request.prompt, std::move(prompt_run->logits), limits,
      [&](int32_t token, std::span<const float> logits) {
        if (request.top_logprobs >= 0)
          logprobs.push_back(
              chat_logprob(score_logits(logits, token, request.top_logprobs), model.tokenizer));
        const ChatDelta delta = answer.push(token);
        if (stream && !delta.empty()) {
          Json lp = logprobs.empty() ? Json(nullptr) : Json{{"content", std::move(logprobs)}};
          logprobs = Json::array();
          job.send(sse_event(chunks.chunk(delta_json(delta), std::move(lp))));
        }
        return !answer.stopped_by_string() && !job.cancelled();
      },
      request.top_logprobs >= 0 ? LogitsNeed::every_token : LogitsNeed::when_decoded);
  context.generated_tokens += static_cast<int64_t>(generation.tokens.size());
  if (job.cancelled()) return;

  const ChatAnswer::Ending ending = answer.finish();
  const std::string reason =
      finish_reason(generation.reason, answer.stopped_by_string(), !ending.calls.empty());
  const Json usage = usage_json(static_cast<int64_t>(request.prompt.size()),
                                static_cast<int64_t>(generation.tokens.size()), prompt_run->reused);
  if (stream) {
    Json lp = logprobs.empty() ? Json(nullptr) : Json{{"content", std::move(logprobs)}};
    if (!ending.delta.empty() || !lp.is_null())
      job.send(sse_event(chunks.chunk(delta_json(ending.delta), std::move(lp))));
    if (!ending.calls.empty())
      job.send(sse_event(chunks.chunk({{"tool_calls", tool_calls_json(ending.calls, ids, true)}})));
    job.send(sse_event(chunks.chunk(Json::object(), nullptr, reason)));
    if (request.generation.include_usage) job.send(sse_event(chunks.usage(usage)));
    job.send_last(std::string(kSseDone));
    return;
  }
  Json message = {{"role", "assistant"}};
  message["content"] =
      ending.calls.empty() || !answer.content().empty() ? Json(answer.content()) : Json(nullptr);
  if (request.thinking) message["reasoning_content"] = answer.reasoning();
  if (!ending.calls.empty()) message["tool_calls"] = tool_calls_json(ending.calls, ids, false);
  Json choice = {{"index", 0},
                 {"message", std::move(message)},
                 {"logprobs", request.top_logprobs >= 0 ? Json{{"content", std::move(logprobs)}}
                                                        : Json(nullptr)},
                 {"finish_reason", reason}};
  const Json body = {{"id", identity.id},
                     {"object", "chat.completion"},
                     {"created", identity.created},
                     {"model", identity.model},
                     {"choices", Json::array({std::move(choice)})},
                     {"usage", usage}};
  job.send_last(body.dump(-1, ' ', false, Json::error_handler_t::replace));
}

}  // namespace glmrt::serve
