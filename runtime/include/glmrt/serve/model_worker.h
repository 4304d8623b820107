// The one thread that runs the model. Requests wait in a bounded queue and
// run one at a time, in arrival order: the model's forward pass already uses
// every core (OpenMP), and one session's KV cache holds one sequence, so
// batching requests would add cache swapping without adding throughput on
// one machine. The session persists across requests, so a request that
// shares a prefix with the previous one (the next turn of a chat, another
// continuation of an evaluation context) prefills only what differs.
#pragma once

#include <glmrt/engine/engine.h>
#include <glmrt/generate/session.h>
#include <glmrt/score/sequence_scorer.h>
#include <glmrt/serve/job.h>
#include <glmrt/serve/metrics.h>
#include <glmrt/serve/session_slots.h>

#include <chrono>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>

namespace glmrt::serve {

/// What a job's work may use; only on the model thread.
struct ModelContext {
  Engine& engine;
  SessionSlots slots;            // a job chooses its slot, then uses its session and scorer
  int64_t generated_tokens = 0;  // answer tokens of every job so far (jobs add theirs)
  Metrics* metrics = nullptr;    // for the token latencies jobs observe
  ModelContext(Engine& e, size_t slot_count, Metrics* m)
      : engine(e), slots(e, slot_count), metrics(m) {}
};

class ModelWorker {
 public:
  /// `max_waiting` jobs may wait while one runs. `engine` and `metrics` must
  /// outlive the worker.
  ModelWorker(Engine& engine, size_t max_waiting, size_t slots, Metrics& metrics);
  ~ModelWorker();
  ModelWorker(const ModelWorker&) = delete;
  ModelWorker& operator=(const ModelWorker&) = delete;

  enum class Admission { queued, full, closed };
  Admission submit(std::shared_ptr<Job> job);
  /// Cancels `job` (its client left) and takes it out of the queue if it is
  /// still waiting, so it does not hold a place.
  void withdraw(const std::shared_ptr<Job>& job);

  /// Refuses new jobs, ends the waiting ones with 503, gives the running one
  /// `grace` to finish before cancelling it, and joins the thread.
  void shutdown(std::chrono::milliseconds grace);

  /// The context jobs run with (touch it only from a job's work).
  ModelContext& context() { return context_; }

 private:
  void loop();
  void publish(const SessionStats& before, int64_t generated);

  ModelContext context_;
  Metrics& metrics_;
  const size_t max_waiting_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<std::shared_ptr<Job>> waiting_;
  std::shared_ptr<Job> running_;
  bool closed_ = false;
  std::thread thread_;
};

}  // namespace glmrt::serve
