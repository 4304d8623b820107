#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/generate/batch_generation.h>

#include "answer.h"

#include <algorithm>
#include <chrono>

namespace glmrt {

struct BatchGeneration::Stream {
  Stream(Session& session, Sampler& sampler, std::span<const int32_t> prompt,
         const GenerationLimits& given, TokenLogitsCallback callback)
      : session(session),
        sampler(sampler),
        prompt(prompt.begin(), prompt.end()),
        stop_tokens(given.stop_tokens.begin(), given.stop_tokens.end()),
        limits{given.max_new_tokens, stop_tokens},
        on_token(std::move(callback)),
        answer(this->prompt, limits, on_token, sampler) {}

  Session& session;
  Sampler& sampler;
  const std::vector<int32_t> prompt;
  const std::vector<int32_t> stop_tokens;
  const GenerationLimits limits;  // views stop_tokens
  const TokenLogitsCallback on_token;
  Answer answer;
  std::exception_ptr error;  // what its sampler or callback threw
  int64_t prefilled = 0;     // prompt tokens in the session
  int32_t next = -1;         // the token the next step decodes
  bool done = false;
};

BatchGeneration::BatchGeneration(Engine& engine) : engine_(engine) {}

BatchGeneration::~BatchGeneration() = default;

int BatchGeneration::add(Session& session, Sampler& sampler, std::span<const int32_t> prompt,
                         const GenerationLimits& limits, TokenCallback on_token) {
  TokenLogitsCallback forward;
  if (on_token)
    forward = [on_token = std::move(on_token)](int32_t token, std::span<const float>) {
      return on_token(token);
    };
  return add(session, sampler, prompt, limits, std::move(forward));
}

int BatchGeneration::add(Session& session, Sampler& sampler, std::span<const int32_t> prompt,
                         const GenerationLimits& limits, TokenLogitsCallback on_token) {
  if (&session.engine() != &engine_) fail("batch generation: the session runs on another engine");
  if (session.speculator())
    fail(
        "batch generation: the session drafts: streams decoded together run without a drafter "
        "(make the session with std::nullopt, or plugins.draft: none)");
  for (const auto& s : streams_)
    if (s && !s->done && &s->session == &session)
      fail("batch generation: the session is already stream {}'s", &s - streams_.data());
  if (limits.max_new_tokens < 0)
    fail("generate: max_new_tokens must be >= 0, got {}", limits.max_new_tokens);
  if (!std::is_sorted(limits.stop_tokens.begin(), limits.stop_tokens.end()))
    fail("generate: the stop tokens must be sorted ascending");
  if (prompt.empty()) fail("cannot run an empty context: the prompt has no tokens");
  const int64_t max_context = engine_.profile().max_context;
  if (static_cast<int64_t>(prompt.size()) > max_context)
    fail("context full: the prompt's {} tokens do not fit memory.max_context = {} of the profile",
         prompt.size(), max_context);
  auto s = std::make_unique<Stream>(session, sampler, prompt, limits, std::move(on_token));
  if (limits.max_new_tokens == 0) {
    s->done = true;  // as generate(): nothing runs
  } else {
    s->prefilled = session.keep_prefix(prompt);
  }
  streams_.push_back(std::move(s));
  return static_cast<int>(streams_.size()) - 1;
}

BatchGeneration::Stream& BatchGeneration::stream(int id) const {
  if (id < 0 || id >= static_cast<int>(streams_.size()))
    fail("batch generation: no stream {} (there are {})", id, streams_.size());
  if (!streams_[static_cast<size_t>(id)]) fail("batch generation: stream {} was forgotten", id);
  return *streams_[static_cast<size_t>(id)];
}

std::exception_ptr BatchGeneration::error(int id) const {
  return stream(id).error;
}

void BatchGeneration::forget(int id) {
  if (!stream(id).done) fail("batch generation: stream {} is still running", id);
  streams_[static_cast<size_t>(id)].reset();
  // Ids of live streams stay; trailing forgotten ones are given out again.
  while (!streams_.empty() && !streams_.back()) streams_.pop_back();
}

void BatchGeneration::cancel(int id) {
  Stream& s = stream(id);
  if (s.done) return;
  s.answer.result().reason = StopReason::cancelled;
  finish(s);
}

bool BatchGeneration::finished(int id) const {
  return stream(id).done;
}

const Generation& BatchGeneration::result(int id) const {
  return stream(id).answer.result();
}

int BatchGeneration::active() const {
  return static_cast<int>(
      std::count_if(streams_.begin(), streams_.end(), [](const auto& s) { return s && !s->done; }));
}

void BatchGeneration::finish(Stream& s) {
  s.done = true;
  // As generate(): a finished answer saves what it taught the usage history.
  engine_.save_history();
}

void BatchGeneration::decide(Stream& s, std::span<const float> logits) {
  const int32_t token = s.sampler.sample(logits, s.answer.context(), s.answer.tokens());
  if (!s.answer.take(token, logits)) return finish(s);
  // Decoding `token` stores it in the cache: one more row must fit.
  if (static_cast<int64_t>(s.session.tokens().size()) + 1 > engine_.profile().max_context) {
    s.answer.result().reason = StopReason::context_full;
    return finish(s);
  }
  s.next = token;
}

bool BatchGeneration::step() {
  std::vector<Stream*> running;
  std::vector<SessionStep> steps;
  StepRows rows;
  for (const auto& s : streams_) {
    if (!s || s->done) continue;
    const int64_t left = static_cast<int64_t>(s->prompt.size()) - s->prefilled;
    if (left > 0) {
      // The prompt's chunks as set_context() runs them alone: the same rows
      // per forward, so the same attention form and the same bits.
      const int64_t chunk = s->session.prefill_chunk();
      const int64_t n = chunk > 0 ? std::min(chunk, left) : left;
      steps.push_back({s->session, std::span(s->prompt).subspan(s->prefilled, n), true, n == left});
      rows.prefill += n;
    } else {
      steps.push_back({s->session, std::span(&s->next, 1), false, true});
      ++rows.decode;
    }
    running.push_back(s.get());
  }
  last_step_ = rows;
  if (running.empty()) return false;
  const auto t0 = std::chrono::steady_clock::now();
  const std::vector<std::vector<float>> logits = Session::run_together(steps);
  last_step_.seconds = seconds_since(t0);
  for (size_t i = 0; i < running.size(); ++i) {
    Stream& s = *running[i];
    if (steps[i].prefill) {
      s.prefilled += static_cast<int64_t>(steps[i].tokens.size());
      if (!steps[i].logits) continue;
    }
    if (s.done) continue;
    try {
      decide(s, logits[i]);
    } catch (...) {
      // Its sampler or callback failed (a constraint it cannot meet, a
      // client's stream that broke): that stream ends, the others go on.
      s.error = std::current_exception();
      s.answer.result().reason = StopReason::cancelled;
      finish(s);
    }
  }
  return true;
}

void BatchGeneration::run() {
  while (step()) {
  }
}

}  // namespace glmrt
