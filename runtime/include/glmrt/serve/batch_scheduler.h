// The model thread of `glmrt serve`. Each request's work runs on a thread of
// its own and hands this thread what touches the model: a piece of work run
// between two steps (choosing a slot, scoring a prompt), or a stream to
// generate. The streams of every request generating at once advance together,
// one BatchGeneration step — one forward over all their rows, each MoE layer
// reading the union of their experts once — at a time, and a new request's
// prompt joins in chunks between the others' decode steps, so running
// answers keep flowing. A stream's tokens are the ones it gets alone.
#pragma once

#include <glmrt/engine/engine.h>
#include <glmrt/generate/batch_generation.h>
#include <glmrt/generate/generator.h>
#include <glmrt/generate/session.h>
#include <glmrt/sampling/sampler.h>
#include <glmrt/serve/stream_outbox.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

namespace glmrt::serve {

class BatchScheduler {
 public:
  /// `engine` must outlive the scheduler. With `parallel` 1 a drafting
  /// session decodes as generate() does, its drafter deciding alone.
  BatchScheduler(Engine& engine, size_t parallel);
  /// Stops the thread; nothing may be waiting on it then.
  ~BatchScheduler();
  BatchScheduler(const BatchScheduler&) = delete;
  BatchScheduler& operator=(const BatchScheduler&) = delete;

  /// Runs `work` on the model thread between two steps; returns once it ran,
  /// rethrowing what it threw.
  void run(const std::function<void()>& work);

  struct Stream {
    Session& session;
    Sampler& sampler;
    std::span<const int32_t> prompt;
    GenerationLimits limits;
    /// Each token with the logits it was drawn from, on the model thread
    /// (every other stream waits meanwhile); false ends the answer. It should
    /// only decide: what it sends goes through `outbox`.
    TokenLogitsCallback on_token;
    /// Asked before each step: true ends the stream (reason cancelled).
    std::function<bool()> cancelled;
    /// A drafting session's accepted drafts have no logits unless every_token.
    LogitsNeed need = LogitsNeed::when_decoded;
    /// Where on_token posts the rest of a token's work: generate() runs it on
    /// the caller's thread as it comes (nullptr: nothing is posted). Work that
    /// throws ends the stream, and generate() rethrows it.
    StreamOutbox* outbox = nullptr;
  };
  struct Outcome {
    Generation generation;
    int64_t reused = 0;                                 // prompt tokens the session already held
    std::chrono::steady_clock::time_point prompt_done;  // when the prompt's last chunk ran
  };
  /// Generates `stream` from its prompt on, together with every other stream
  /// under way, and returns when it ends. A session that drafts with
  /// `parallel` 1, or a limit of 0 tokens, runs alone as generate() would.
  /// Throws what its sampler or callback threw, or what failed the step.
  Outcome generate(const Stream& stream);

 private:
  struct Work;
  struct Waiter;
  void loop();
  void admit(std::vector<Waiter*>& arrived);
  void step();
  Outcome alone(const Stream& stream);
  /// Runs `work` on the model thread, the caller running what it posts to `outbox` meanwhile.
  void run(const std::function<void()>& work, StreamOutbox* outbox);

  Engine& engine_;
  const bool drafts_alone_;
  BatchGeneration batch_;         // the model thread's only
  std::vector<Waiter*> running_;  // the model thread's only
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Work*> work_;
  std::vector<Waiter*> arriving_;
  bool closing_ = false;
  std::thread thread_;
};

}  // namespace glmrt::serve
