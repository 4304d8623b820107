#include <glmrt/generate/speculator.h>
#include <glmrt/serve/model_worker.h>

#include <omp.h>

namespace glmrt::serve {

ModelWorker::ModelWorker(Engine& engine, size_t max_waiting, size_t slots, Metrics& metrics)
    : context_(engine, slots, &metrics), metrics_(metrics), max_waiting_(max_waiting) {
  publish({}, 0);
  thread_ = std::thread([this] { loop(); });
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
    metrics_.set_queue(waiting_.size(), running_ != nullptr);
  }
  changed_.notify_all();
  return Admission::queued;
}

void ModelWorker::withdraw(const std::shared_ptr<Job>& job) {
  job->cancel();
  std::lock_guard lock(mutex_);
  std::erase(waiting_, job);
  metrics_.set_queue(waiting_.size(), running_ != nullptr);
}

void ModelWorker::shutdown(std::chrono::milliseconds grace) {
  std::deque<std::shared_ptr<Job>> refused;
  {
    std::unique_lock lock(mutex_);
    closed_ = true;
    refused.swap(waiting_);
    changed_.notify_all();
    // The running job may finish within the grace period; then it is cancelled.
    if (!changed_.wait_for(lock, grace, [&] { return running_ == nullptr; }) && running_)
      running_->cancel();
  }
  for (auto& job : refused)
    job->abandon(ApiError(503, "server_error", "the server is shutting down"));
  if (thread_.joinable()) thread_.join();
}

void ModelWorker::loop() {
  // The OpenMP thread count is per thread: the engine set it on the thread
  // that loaded the model, not on this one.
  omp_set_num_threads(effective_threads(context_.engine.profile()));
  for (;;) {
    std::shared_ptr<Job> job;
    {
      std::unique_lock lock(mutex_);
      changed_.wait(lock, [&] { return closed_ || !waiting_.empty(); });
      if (waiting_.empty()) return;  // closed
      job = std::move(waiting_.front());
      waiting_.pop_front();
      running_ = job;
      metrics_.set_queue(waiting_.size(), true);
    }
    const SessionStats before = context_.slots.stats();
    const int64_t generated_before = context_.generated_tokens;
    if (!job->cancelled())
      job->run();
    else
      job->abandon(ApiError(499, "request_cancelled", "the client went away"));
    publish(before, context_.generated_tokens - generated_before);
    {
      std::lock_guard lock(mutex_);
      running_ = nullptr;
      metrics_.set_queue(waiting_.size(), false);
    }
    changed_.notify_all();
  }
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
  if (const Speculator* speculator = context_.slots.session().speculator())
    s.draft = speculator->stats();
  metrics_.publish(s);
}

}  // namespace glmrt::serve
