#include <glmrt/base/error.h>
#include <glmrt/generate/speculator.h>
#include <glmrt/serve/model_worker.h>

namespace glmrt::serve {

HeldSlot::HeldSlot(ModelContext& context, std::span<const int32_t> prompt, int64_t max_new_tokens)
    : context_(context) {
  context_.scheduler.run([&] { index_ = context_.slots.choose(prompt, max_new_tokens); });
  if (context_.metrics) context_.metrics->set_slot_processing(static_cast<int64_t>(index_), true);
}

HeldSlot::~HeldSlot() {
  if (context_.metrics) context_.metrics->set_slot_processing(static_cast<int64_t>(index_), false);
  context_.scheduler.run([&] { context_.slots.release(index_); });
}

ModelWorker::ModelWorker(Engine& engine, size_t max_waiting, size_t slots, size_t parallel,
                         Metrics& metrics)
    : context_(engine, slots, parallel, &metrics), metrics_(metrics), max_waiting_(max_waiting) {
  if (parallel < 1 || parallel > slots)
    fail("serve: --parallel must be in 1..--slots ({}), got {}", slots, parallel);
  context_.scheduler.run([&] { publish({}, 0); });
  for (size_t i = 0; i < parallel; ++i) threads_.emplace_back([this] { loop(); });
}

ModelWorker::~ModelWorker() {
  shutdown(std::chrono::milliseconds(0));
}

ModelWorker::Admission ModelWorker::submit(std::shared_ptr<Job> job) {
  {
    std::lock_guard lock(mutex_);
    if (closed_) return Admission::closed;
    if (waiting_.size() >= max_waiting_) return Admission::full;
    waiting_.push_back(std::move(job));
    metrics_.set_queue(waiting_.size(), running_.size());
  }
  changed_.notify_all();
  return Admission::queued;
}

void ModelWorker::withdraw(const std::shared_ptr<Job>& job) {
  job->cancel();
  std::lock_guard lock(mutex_);
  std::erase(waiting_, job);
  metrics_.set_queue(waiting_.size(), running_.size());
}

void ModelWorker::shutdown(std::chrono::milliseconds grace) {
  std::deque<std::shared_ptr<Job>> refused;
  {
    std::unique_lock lock(mutex_);
    closed_ = true;
    refused.swap(waiting_);
    changed_.notify_all();
    // The running jobs may finish within the grace period; then they are cancelled.
    if (!changed_.wait_for(lock, grace, [&] { return running_.empty(); }))
      for (const auto& job : running_) job->cancel();
  }
  for (auto& job : refused)
    job->abandon(ApiError(503, "server_error", "the server is shutting down"));
  for (std::thread& thread : threads_)
    if (thread.joinable()) thread.join();
}

void ModelWorker::loop() {
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return closed_ || !waiting_.empty(); });
      if (waiting_.empty()) return;  // closed
      job = std::move(waiting_.front());
      waiting_.pop_front();
      running_.push_back(job);
      metrics_.set_queue(waiting_.size(), running_.size());
    }
    run(job);
    {
      std::lock_guard lock(mutex_);
      std::erase(running_, job);
      metrics_.set_queue(waiting_.size(), running_.size());
    }
    changed_.notify_all();
  }
}

void ModelWorker::run(const std::shared_ptr<Job>& job) {
  SessionStats before;
  context_.scheduler.run([&] { before = context_.slots.stats(); });
  if (!job->cancelled())
    job->run();
  else
    job->abandon(ApiError(499, "request_cancelled", "the client went away"));
  // With other jobs running, "the last request"'s prefill and decode figures
  // count what the model did while this one ran.
  context_.scheduler.run([&] { publish(before, job->generated()); });
}

void ModelWorker::publish(const SessionStats& before, int64_t generated) {
  ModelSnapshot s;
  s.last_generated_tokens = generated > 0 ? generated : metrics_.snapshot().last_generated_tokens;
  s.totals = context_.slots.stats();
  const SessionStats last = session_stats_since(s.totals, before);
  s.last = last.prefilled_tokens + last.decoded_tokens > 0 ? last : metrics_.snapshot().last;
  s.experts = context_.engine.experts().stats();
  s.budget_peak_bytes = context_.engine.budget().peak();
  s.cached_tokens = context_.slots.cached_tokens();
  s.slots_occupied = static_cast<int64_t>(context_.slots.occupied());
  s.slots = static_cast<int64_t>(context_.slots.size());
  for (size_t i = 0; i < context_.slots.size(); ++i)
    s.slot_tokens.push_back(context_.slots.tokens_in(i));
  // The drafter of the slot chosen last (each slot's session has its own).
  if (const Speculator* speculator =
          context_.slots.session(context_.slots.last_chosen()).speculator())
    s.draft = speculator->stats();
  metrics_.publish(s);
}

}  // namespace glmrt::serve
