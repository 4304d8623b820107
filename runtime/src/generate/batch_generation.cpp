#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/generate/batch_generation.h>
#include <glmrt/generate/speculator.h>

#include "answer.h"

#include <algorithm>
#include <chrono>

namespace glmrt {

struct BatchGeneration::Stream {
  Stream(Session& session, Sampler& sampler, std::span<const int32_t> prompt,
         const GenerationLimits& given, TokenLogitsCallback callback, LogitsNeed need)
      : session(session),
        speculator(need == LogitsNeed::every_token ? nullptr : session.speculator()),
        sampler(sampler),
        prompt(prompt.begin(), prompt.end()),
        stop_tokens(given.stop_tokens.begin(), given.stop_tokens.end()),
        limits{given.max_new_tokens, stop_tokens},
        on_token(std::move(callback)),
        answer(this->prompt, limits, on_token, sampler) {}

  Session& session;
  Speculator* const speculator;  // null: one token per step
  Sampler& sampler;
  const std::vector<int32_t> prompt;
  const std::vector<int32_t> stop_tokens;
  const GenerationLimits limits;  // views stop_tokens
  const TokenLogitsCallback on_token;
  Answer answer;
  std::exception_ptr error;   // what its sampler or callback threw
  int64_t prefilled = 0;      // prompt tokens in the session
  int32_t next = -1;          // the token the next step decodes
  std::vector<int32_t> rows;  // a drafting step's: next and its drafts
  bool done = false;
};

BatchGeneration::BatchGeneration(Engine& engine)
    : engine_(engine), plan_(engine.model().experts_per_position()) {}

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
                         const GenerationLimits& limits, TokenLogitsCallback on_token,
                         LogitsNeed need) {
  if (&session.engine() != &engine_) fail("batch generation: the session runs on another engine");
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
  auto s = std::make_unique<Stream>(session, sampler, prompt, limits, std::move(on_token), need);
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
  // The session never keeps more than prompt + answer: a verification's rows
  // past a token that ended the answer go.
  const int64_t kept = static_cast<int64_t>(s.prompt.size() + s.answer.tokens().size());
  if (static_cast<int64_t>(s.session.tokens().size()) > kept) s.session.rollback_to(kept);
  // As generate(): a finished answer saves what it taught the usage history.
  engine_.save_history();
}

void BatchGeneration::fail_stream(Stream& s) {
  // Its sampler, callback or drafter failed (a constraint it cannot meet, a
  // client's stream that broke): that stream ends, the others go on.
  s.error = std::current_exception();
  s.answer.result().reason = StopReason::cancelled;
  finish(s);
}

void BatchGeneration::take(Stream& s, int32_t token, std::span<const float> logits) {
  if (!s.answer.take(token, logits)) return finish(s);
  // Decoding `token` stores it in the cache: one more row must fit.
  if (static_cast<int64_t>(s.session.tokens().size()) + 1 > engine_.profile().max_context) {
    s.answer.result().reason = StopReason::context_full;
    return finish(s);
  }
  s.next = token;
}

void BatchGeneration::verified(Stream& s, std::span<const float> logits) {
  const SpeculativeStep step =
      s.speculator->verify(logits, s.sampler, s.answer.context(), s.answer.tokens());
  for (int32_t accepted : step.accepted)
    if (!s.answer.take(accepted, {})) return finish(s);
  // Every accepted draft was taken and the answer goes on, so the step chose
  // the token after them (it chooses none only at the token limit).
  if (step.next < 0) fail("generate: a speculative step decided no next token");
  take(s, step.next, {});
}

void BatchGeneration::propose(std::span<Stream* const> drafting, int64_t other_rows,
                              int64_t other_tokens) {
  std::vector<BatchDraftCandidate> candidates;
  for (const Stream* s : drafting)
    candidates.push_back(s->speculator->candidate(s->answer.remaining()));
  const std::vector<int> drafts = plan_.plan(candidates, other_rows, other_tokens);
  for (size_t i = 0; i < drafting.size(); ++i) {
    Stream& s = *drafting[i];
    try {
      const std::span<const int32_t> rows = s.speculator->propose(
          s.next, s.sampler, s.answer.tokens(), s.answer.remaining(), drafts[i]);
      s.rows.assign(rows.begin(), rows.end());
    } catch (...) {
      fail_stream(s);
    }
  }
}

bool BatchGeneration::step() {
  std::vector<Stream*> running, drafting;
  StepRows rows;
  bool prefilling = false;
  for (const auto& s : streams_) {
    if (!s || s->done) continue;
    const int64_t left = static_cast<int64_t>(s->prompt.size()) - s->prefilled;
    if (left > 0) {
      // One prompt chunk per step, the first stream's: a step's rows stay
      // within a chunk and a token (and its drafts) per other stream, what
      // the memory plan counts; the next prompt starts when it is done.
      if (prefilling) continue;
      prefilling = true;
      const int64_t chunk = s->session.prefill_chunk();
      rows.prefill += chunk > 0 ? std::min(chunk, left) : left;
    } else if (s->speculator) {
      drafting.push_back(s.get());
    } else {
      ++rows.decode;
    }
    running.push_back(s.get());
  }
  last_step_ = {};
  if (running.empty()) return false;
  propose(drafting, rows.prefill + rows.decode, rows.decode);
  std::vector<Stream*> stepping;
  std::vector<SessionStep> steps;
  for (Stream* s : running) {
    if (s->done) continue;  // its drafter failed
    const int64_t left = static_cast<int64_t>(s->prompt.size()) - s->prefilled;
    if (left > 0) {
      // The prompt's chunks as set_context() runs them alone: the same rows
      // per forward, so the same attention form and the same bits.
      const int64_t chunk = s->session.prefill_chunk();
      const int64_t n = chunk > 0 ? std::min(chunk, left) : left;
      steps.push_back({s->session, std::span(s->prompt).subspan(s->prefilled, n), true, n == left});
    } else if (s->speculator) {
      ++rows.decode;
      rows.drafts += static_cast<int64_t>(s->rows.size()) - 1;
      steps.push_back({s->session, s->rows, false, true, true});
    } else {
      steps.push_back({s->session, std::span(&s->next, 1), false, true});
    }
    stepping.push_back(s);
  }
  last_step_ = rows;
  if (stepping.empty()) return true;  // every drafting stream's drafter failed

  const ExpertStoreStats before = engine_.experts().stats();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::vector<float>> logits;
  try {
    logits = Session::run_together(steps);
  } catch (...) {
    for (Stream* s : stepping)
      if (s->speculator) s->speculator->abandon();
    throw;
  }
  last_step_.seconds = seconds_since(t0);
  const ExpertStoreStats after = engine_.experts().stats();
  plan_.record({rows.prefill + rows.decode + rows.drafts, rows.prefill, last_step_.seconds,
                after.wait_seconds - before.wait_seconds,
                static_cast<int64_t>((after.hits - before.hits) + (after.misses - before.misses)),
                static_cast<int64_t>(after.misses - before.misses)});

  for (size_t i = 0; i < stepping.size(); ++i) {
    Stream& s = *stepping[i];
    const size_t had = s.answer.tokens().size();
    try {
      if (steps[i].prefill) {
        s.prefilled += static_cast<int64_t>(steps[i].tokens.size());
        if (steps[i].logits)
          take(s, s.sampler.sample(logits[i], s.answer.context(), s.answer.tokens()), logits[i]);
      } else if (steps[i].every_row) {
        verified(s, logits[i]);
      } else {
        take(s, s.sampler.sample(logits[i], s.answer.context(), s.answer.tokens()), logits[i]);
      }
    } catch (...) {
      if (!s.done) fail_stream(s);
    }
    last_step_.decided += static_cast<int64_t>(s.answer.tokens().size() - had);
  }
  return true;
}

void BatchGeneration::run() {
  while (step()) {
  }
}

}  // namespace glmrt
