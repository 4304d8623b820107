#include <glmrt/serve/chat_turn.h>
#include <glmrt/serve/completion_jobs.h>

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

struct ChoiceOutcome {
  Json choice;  // the non-streamed choice
  int64_t completion_tokens = 0;
  int64_t cached_tokens = 0;
  Timings timings;
};

// Choice `index` of the request, streamed as it goes when asked.
std::optional<ChoiceOutcome> run_choice(const ChatRequest& request, size_t index,
                                        const ChatChunks& chunks, const ServedModel& model,
                                        IdSource& ids, ModelContext& context, Job& job) {
  const bool stream = request.generation.stream;
  ChatTurnEvents events;
  if (stream) {
    events.prompt_done = [&] {
      job.send(sse_event(chunks.chunk(index, {{"role", "assistant"}, {"content", ""}})));
    };
    events.delta = [&](const ChatDelta& delta, Json& logprobs) {
      Json lp = logprobs.empty() ? Json(nullptr) : Json{{"content", std::move(logprobs)}};
      logprobs = Json::array();
      job.send(sse_event(chunks.chunk(index, delta_json(delta), std::move(lp))));
    };
  }
  auto turn = run_chat_turn(request, index, model, context, job, events);
  if (!turn) return std::nullopt;
  ChoiceOutcome outcome;
  outcome.timings = turn->timings;
  outcome.completion_tokens = turn->completion_tokens;
  outcome.cached_tokens = turn->cached_tokens;
  const std::string reason =
      finish_reason(turn->stop, !turn->stop_string.empty(), !turn->calls.empty());
  if (stream) {
    Json lp = turn->logprobs.empty() ? Json(nullptr) : Json{{"content", std::move(turn->logprobs)}};
    if (!turn->last.empty() || !lp.is_null())
      job.send(sse_event(chunks.chunk(index, delta_json(turn->last), std::move(lp))));
    if (!turn->calls.empty())
      job.send(sse_event(
          chunks.chunk(index, {{"tool_calls", tool_calls_json(turn->calls, ids, true)}})));
    job.send(
        sse_event(chunks.chunk(index, Json::object(), nullptr, reason, outcome.timings.json())));
    return outcome;
  }
  Json message = {{"role", "assistant"}};
  message["content"] =
      turn->calls.empty() || !turn->content.empty() ? Json(turn->content) : Json(nullptr);
  if (request.thinking) message["reasoning_content"] = turn->reasoning;
  if (!turn->calls.empty()) message["tool_calls"] = tool_calls_json(turn->calls, ids, false);
  outcome.choice = {
      {"index", index},
      {"message", std::move(message)},
      {"logprobs",
       request.top_logprobs >= 0 ? Json{{"content", std::move(turn->logprobs)}} : Json(nullptr)},
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
