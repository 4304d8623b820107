#include <glmrt/serve/chat_answer.h>
#include <glmrt/serve/chat_turn.h>
#include <glmrt/serve/json_output.h>
#include <glmrt/serve/logprobs_json.h>
#include <glmrt/serve/stream_outbox.h>

#include <algorithm>
#include <chrono>
#include <optional>

namespace glmrt::serve {
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

}  // namespace

std::optional<ChatTurn> run_chat_turn(const ChatRequest& request, size_t index,
                                      const ServedModel& model, ModelContext& context, Job& job,
                                      const ChatTurnEvents& events) {
  const auto prompt_start = std::chrono::steady_clock::now();
  HeldSlot slot(context, request.prompt, request.generation.sampling.max_new_tokens);
  ChatTurn turn;
  // Told once the prompt ran (with its first token), as a client expects.
  bool prompt_told = false;
  const auto tell_prompt_done = [&] {
    if (!prompt_told && events.prompt_done) events.prompt_done();
    prompt_told = true;
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
  TokenTimer timer(context.metrics, job.queued_at());
  // On the model thread only what decides whether the answer goes on (the
  // answer's text: a stop string) and what needs the logits (the token's
  // scores, a few numbers); the events' JSON runs on this thread, beside the
  // other streams' forward (StreamOutbox).
  StreamOutbox outbox;
  const BatchScheduler::Outcome run = context.scheduler.generate(
      {slot.session(), sampler, request.prompt, limits,
       [&](int32_t token, std::span<const float> logits) {
         timer.token();
         std::optional<TokenScore> score;
         if (request.top_logprobs >= 0) score = score_logits(logits, token, request.top_logprobs);
         ChatDelta delta = answer.push(token);
         outbox.post([&, score = std::move(score), delta = std::move(delta)] {
           tell_prompt_done();
           if (score) turn.logprobs.push_back(chat_logprob(*score, model.tokenizer));
           if (events.delta && !delta.empty()) events.delta(delta, turn.logprobs);
         });
         return !answer.stopped_by_string() && !job.cancelled();
       },
       [&] { return job.cancelled(); },
       request.top_logprobs >= 0 ? LogitsNeed::every_token : LogitsNeed::when_decoded, &outbox});
  const Generation& generation = run.generation;
  job.add_generated(static_cast<int64_t>(generation.tokens.size()));
  if (job.cancelled()) return std::nullopt;
  tell_prompt_done();
  turn.timings.prompt_n = static_cast<int64_t>(request.prompt.size()) - run.reused;
  turn.timings.prompt_ms =
      std::chrono::duration<double, std::milli>(run.prompt_done - prompt_start).count();
  turn.cached_tokens = run.reused;
  turn.timings.predicted_n = static_cast<int64_t>(generation.tokens.size());
  turn.timings.predicted_ms = milliseconds_since(run.prompt_done);
  turn.completion_tokens = static_cast<int64_t>(generation.tokens.size());
  turn.stop = generation.reason;
  turn.stop_string = answer.stop_string();

  ChatAnswer::Ending ending = answer.finish();
  // parallel_tool_calls: false asks for one call at most: the first, as vLLM.
  if (!request.parallel_tool_calls && ending.calls.size() > 1) ending.calls.resize(1);
  turn.content = answer.content();
  if (request.forced_call && ending.calls.empty()) {
    // The held call text is not content: the call replaces it.
    const size_t opening = turn.content.find(tool_syntax.opening());
    ending.calls.push_back(forced_call_fallback(
        request, tool_syntax,
        std::string_view(turn.content).substr(std::min(opening, turn.content.size()))));
    turn.content = turn.content.substr(0, opening);
    ending.delta.content =
        ending.delta.content.substr(0, ending.delta.content.find(tool_syntax.opening()));
  } else if (!request.forced_function.empty() &&
             ending.calls.front().name != request.forced_function) {
    // The model ran on after the name the prompt gave it (GLM writes no
    // separator after a name): the call is still to the named function.
    ending.calls.front().name = request.forced_function;
  }
  turn.reasoning = answer.reasoning();
  turn.calls = std::move(ending.calls);
  turn.last = std::move(ending.delta);
  return turn;
}

}  // namespace glmrt::serve
