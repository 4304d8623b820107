#include <glmrt/serve/completion_jobs.h>
#include <glmrt/serve/logprobs_json.h>
#include <glmrt/serve/stop_strings.h>
#include <glmrt/serve/stream_outbox.h>
#include <glmrt/text/stream_detokenizer.h>

#include <chrono>
#include <optional>

namespace glmrt::serve {
namespace {

struct ChoiceResult {
  Json choice;
  int64_t prompt_tokens = 0, completion_tokens = 0, cached_tokens = 0;
  Timings timings;
};

class CompletionChunks {
 public:
  CompletionChunks(const ResponseIdentity& identity, bool include_usage)
      : identity_(identity), include_usage_(include_usage) {}

  Json chunk(size_t index, std::string text, Json logprobs, Json finish = nullptr,
             Json timings = nullptr) const {
    Json choice = {{"index", index},
                   {"text", std::move(text)},
                   {"logprobs", std::move(logprobs)},
                   {"finish_reason", std::move(finish)}};
    Json c = header();
    c["choices"] = Json::array({std::move(choice)});
    if (include_usage_) c["usage"] = nullptr;
    if (!timings.is_null()) c["timings"] = std::move(timings);
    return c;
  }
  Json usage(Json usage) const {
    Json c = header();
    c["choices"] = Json::array();
    c["usage"] = std::move(usage);
    return c;
  }

 private:
  Json header() const {
    return {{"id", identity_.id},
            {"object", "text_completion"},
            {"created", identity_.created},
            {"model", identity_.model}};
  }
  const ResponseIdentity& identity_;
  bool include_usage_;
};

// One prompt of the request: echo, scoring and generation for choice `index`.
class ChoiceRun {
 public:
  // Choice `sample` of prompt `prompt_index`: choice index prompt_index * n + sample.
  ChoiceRun(const CompletionRequest& request, size_t prompt_index, size_t sample,
            const ServedModel& model, ModelContext& context, Job& job,
            const CompletionChunks& chunks)
      : request_(request),
        prompt_index_(prompt_index),
        sample_(sample),
        index_(prompt_index * static_cast<size_t>(request.generation.n) + sample),
        model_(model),
        context_(context),
        job_(job),
        chunks_(chunks),
        detokenizer_(model.tokenizer),
        logprobs_(model.tokenizer) {}

  // Nothing when the client went away.
  std::optional<ChoiceResult> run() {
    const std::vector<int32_t>& prompt = request_.prompts[prompt_index_];
    auto cancelled = [&] { return job_.cancelled(); };
    ChoiceResult result;
    const auto prompt_start = std::chrono::steady_clock::now();
    HeldSlot slot(context_, prompt, request_.generation.sampling.max_new_tokens);
    std::optional<int64_t> scored_reused;
    if (request_.echo && request_.logprobs >= 0) {
      // The prompt's scores need every position's logits: it runs alone
      // (the other streams wait), then generation goes on from its end.
      std::vector<TokenScore> scores;
      try {
        context_.scheduler.run([&] {
          auto scored = slot.scorer().score(prompt, request_.logprobs, cancelled);
          scored_reused = scored.reused;
          scores = std::move(scored.scores);
        });
      } catch (const ScoringCancelled&) {
        return std::nullopt;
      }
      echo_prompt(prompt, scores);
    } else if (request_.echo) {
      echo_prompt(prompt, {});
    }

    SamplingParams sampling = request_.generation.sampling;
    sampling.seed += sample_;  // choice 0 is what n = 1 answers
    const GenerationLimits limits{request_.generation.sampling.max_new_tokens,
                                  stop_tokens(request_.generation, model_, Endpoint::completions)};
    Sampler sampler(sampling, json_constraint(request_.generation.json_format, *model_.token_trie,
                                              limits.stop_tokens));
    StopStringFilter stops(request_.generation.stop);
    TokenTimer timer(context_.metrics, job_.queued_at());
    bool prompt_sent = false;  // the echo goes out once the prompt ran
    // The text and the token's scores are decided on the model thread (a stop
    // string ends the stream); the logprobs' JSON and the events run on this
    // thread (StreamOutbox).
    StreamOutbox outbox;
    const BatchScheduler::Outcome run = context_.scheduler.generate(
        {slot.session(), sampler, prompt, limits,
         [&](int32_t token, std::span<const float> token_logits) {
           timer.token();
           std::optional<TokenScore> score;
           if (request_.logprobs >= 0) score = score_logits(token_logits, token, request_.logprobs);
           const auto id = static_cast<text::TokenId>(token);
           // A skipped special token is left out of the text (and the offsets).
           std::string piece =
               request_.generation.skip_special_tokens && model_.tokenizer.is_special(id)
                   ? std::string()
                   : detokenizer_.push(id);
           std::string kept = stops.push(piece);
           outbox.post(
               [&, score = std::move(score), piece = std::move(piece), kept = std::move(kept)] {
                 if (!prompt_sent) send_text();
                 prompt_sent = true;
                 if (score) logprobs_.add(*score, offset_);
                 offset_ += code_points(piece);
                 text_ += kept;
                 send_text();
               });
           return !stops.stopped() && !cancelled();
         },
         cancelled, request_.logprobs >= 0 ? LogitsNeed::every_token : LogitsNeed::when_decoded,
         &outbox});
    const Generation& generation = run.generation;
    job_.add_generated(static_cast<int64_t>(generation.tokens.size()));
    if (cancelled()) return std::nullopt;
    result.cached_tokens = scored_reused.value_or(run.reused);
    result.timings.prompt_n = static_cast<int64_t>(prompt.size()) - result.cached_tokens;
    result.timings.prompt_ms =
        std::chrono::duration<double, std::milli>(run.prompt_done - prompt_start).count();
    result.timings.predicted_n = static_cast<int64_t>(generation.tokens.size());
    result.timings.predicted_ms = milliseconds_since(run.prompt_done);
    if (!stops.stopped()) {
      text_ += stops.push(detokenizer_.flush());
      if (!stops.stopped()) text_ += stops.flush();
    }
    // max_tokens 0 scores only: OpenAI reports it as cut by length.
    const std::string reason = request_.generation.sampling.max_new_tokens == 0
                                   ? "length"
                                   : finish_reason(generation.reason, stops.stopped(), false);
    result.prompt_tokens = static_cast<int64_t>(prompt.size());
    result.completion_tokens = static_cast<int64_t>(generation.tokens.size());
    if (request_.generation.stream) {
      send_text();
      job_.send(sse_event(chunks_.chunk(index_, "", nullptr, reason, result.timings.json())));
    }
    result.choice = {{"text", std::move(text_)},
                     {"index", index_},
                     {"logprobs", request_.logprobs >= 0 ? logprobs_.json() : Json(nullptr)},
                     {"finish_reason", reason}};
    return result;
  }

 private:
  void echo_prompt(std::span<const int32_t> prompt, std::span<const TokenScore> scores) {
    for (size_t i = 0; i < prompt.size(); ++i) {
      if (request_.logprobs >= 0) {
        if (i == 0)
          logprobs_.add_unscored(prompt[0], offset_);
        else
          logprobs_.add(scores[i - 1], offset_);
      }
      const std::string piece = detokenizer_.push(static_cast<text::TokenId>(prompt[i]));
      offset_ += code_points(piece);
      text_ += piece;
    }
  }

  // Streaming: what was decided since the last event.
  void send_text() {
    if (!request_.generation.stream) return;
    const bool new_logprobs = request_.logprobs >= 0 && logprobs_.size() > logprobs_sent_;
    if (text_.size() == text_sent_ && !new_logprobs) return;
    Json lp = request_.logprobs >= 0 ? logprobs_.json(logprobs_sent_) : Json(nullptr);
    job_.send(sse_event(chunks_.chunk(index_, text_.substr(text_sent_), std::move(lp))));
    text_sent_ = text_.size();
    logprobs_sent_ = logprobs_.size();
  }

  const CompletionRequest& request_;
  size_t prompt_index_, sample_, index_;
  const ServedModel& model_;
  ModelContext& context_;
  Job& job_;
  const CompletionChunks& chunks_;
  text::StreamDetokenizer detokenizer_;
  LegacyLogprobs logprobs_;
  std::string text_;    // the choice's text so far (echo included)
  int64_t offset_ = 0;  // code points decoded so far: the next token's text_offset
  size_t text_sent_ = 0, logprobs_sent_ = 0;
};

}  // namespace

void run_text_completion(const CompletionRequest& request, const ResponseIdentity& identity,
                         const ServedModel& model, ModelContext& context, Job& job) {
  const CompletionChunks chunks(identity, request.generation.include_usage);
  Json choices = Json::array();
  int64_t prompt_tokens = 0, completion_tokens = 0, cached_tokens = 0;
  Timings timings;
  for (size_t i = 0; i < request.prompts.size(); ++i) {
    for (size_t sample = 0; sample < static_cast<size_t>(request.generation.n); ++sample) {
      auto result = ChoiceRun(request, i, sample, model, context, job, chunks).run();
      if (!result) return;
      if (sample == 0) {  // a prompt counts once, however many choices it has
        prompt_tokens += result->prompt_tokens;
        cached_tokens += result->cached_tokens;
      }
      completion_tokens += result->completion_tokens;
      timings += result->timings;
      choices.push_back(std::move(result->choice));
    }
  }
  const Json usage = usage_json(prompt_tokens, completion_tokens, cached_tokens);
  if (request.generation.stream) {
    if (request.generation.include_usage) job.send(sse_event(chunks.usage(usage)));
    job.send_last(std::string(kSseDone));
    return;
  }
  const Json body = {
      {"id", identity.id},        {"object", "text_completion"},   {"created", identity.created},
      {"model", identity.model},  {"choices", std::move(choices)}, {"usage", usage},
      {"timings", timings.json()}};
  job.send_last(body.dump(-1, ' ', false, Json::error_handler_t::replace));
}

}  // namespace glmrt::serve
