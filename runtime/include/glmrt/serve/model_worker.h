// The threads that run requests. Up to --parallel jobs run at once, each on
// a thread of its own, in arrival order; more wait in a bounded queue. What a
// job does with the model runs on the one model thread (BatchScheduler): its
// answer is generated together with the other running jobs', one batched
// forward per step. The sessions (slots) persist across requests, so a
// request that shares a prefix with an earlier one (the next turn of a chat,
// another continuation of an evaluation context) prefills only what differs.
#pragma once

#include <glmrt/engine/engine.h>
#include <glmrt/generate/session.h>
#include <glmrt/score/sequence_scorer.h>
#include <glmrt/serve/batch_scheduler.h>
#include <glmrt/serve/job.h>
#include <glmrt/serve/metrics.h>
#include <glmrt/serve/session_slots.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <span>
#include <thread>
#include <vector>

namespace glmrt::serve {

/// What a job's work may use.
struct ModelContext {
  Engine& engine;
  /// Touched only on the model thread (inside scheduler.run(), or by a stream).
  SessionSlots slots;
  Metrics* metrics = nullptr;  // for the token latencies jobs observe
  BatchScheduler scheduler;    // declared last: its thread stops first
  /// Each slot's session keeps the profile's drafter: alone with
  /// `parallel` 1, in the batch's plan otherwise.
  ModelContext(Engine& e, size_t slot_count, size_t parallel, Metrics* m)
      : engine(e), slots(e, slot_count, true), metrics(m), scheduler(e, parallel) {}
};

/// The slot a job's choice runs in (SessionSlots::choose), held until this
/// goes, and shown as processing in /slots meanwhile.
class HeldSlot {
 public:
  HeldSlot(ModelContext& context, std::span<const int32_t> prompt, int64_t max_new_tokens);
  ~HeldSlot();
  HeldSlot(const HeldSlot&) = delete;
  HeldSlot& operator=(const HeldSlot&) = delete;
  size_t index() const { return index_; }
  /// Use them on the model thread only.
  Session& session() { return context_.slots.session(index_); }
  SequenceScorer& scorer() { return context_.slots.scorer(index_); }

 private:
  ModelContext& context_;
  size_t index_ = 0;
};

class ModelWorker {
 public:
  /// `parallel` jobs run at once, `max_waiting` more may wait. Sessions
  /// draft only when `parallel` is 1. `engine` and `metrics` must outlive
  /// the worker.
  ModelWorker(Engine& engine, size_t max_waiting, size_t slots, size_t parallel, Metrics& metrics);
  ~ModelWorker();
  ModelWorker(const ModelWorker&) = delete;
  ModelWorker& operator=(const ModelWorker&) = delete;

  enum class Admission { queued, full, closed };
  Admission submit(std::shared_ptr<Job> job);
  /// Cancels `job` (its client left) and takes it out of the queue if it is
  /// still waiting, so it does not hold a place.
  void withdraw(const std::shared_ptr<Job>& job);

  /// Refuses new jobs, ends the waiting ones with 503, gives the running ones
  /// `grace` to finish before cancelling them, and joins the threads.
  void shutdown(std::chrono::milliseconds grace);

  /// The context jobs run with (touch it only from a job's work).
  ModelContext& context() { return context_; }

 private:
  void loop();
  void run(const std::shared_ptr<Job>& job);
  void publish(const SessionStats& before, int64_t generated);

  ModelContext context_;
  Metrics& metrics_;
  const size_t max_waiting_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<Job>> waiting_;
  std::vector<std::shared_ptr<Job>> running_;
  bool closed_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace glmrt::serve
