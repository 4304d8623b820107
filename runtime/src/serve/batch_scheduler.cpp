#include <glmrt/memory/run_settings.h>
#include <glmrt/score/sequence_scorer.h>
#include <glmrt/serve/batch_scheduler.h>

#include <omp.h>

#include <algorithm>
#include <limits>

namespace glmrt::serve {

struct BatchScheduler::Work {
  Work(const std::function<void()>& r, StreamOutbox* o) : run(r), outbox(o) {}
  const std::function<void()>& run;
  StreamOutbox* outbox;  // closed once `run` returned
  std::exception_ptr error;
  bool done = false;
};

struct BatchScheduler::Waiter {
  explicit Waiter(const Stream& s) : stream(s) {}
  const Stream& stream;
  int id = -1;
  bool prompt_done = false;
  Outcome outcome;
  std::exception_ptr error;
  bool done = false;
};

BatchScheduler::BatchScheduler(Engine& engine, size_t parallel)
    : engine_(engine), drafts_alone_(parallel <= 1), batch_(engine), thread_([this] { loop(); }) {}

BatchScheduler::~BatchScheduler() {
  {
    std::lock_guard lock(mutex_);
    closing_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

namespace {

// Runs what `outbox` receives until the model thread closes it; what the
// posted work threw, for after the model thread let go of the stream.
std::exception_ptr run_posted(StreamOutbox* outbox) {
  if (!outbox) return nullptr;
  try {
    outbox->run_until_closed();
  } catch (...) {
    return std::current_exception();
  }
  return nullptr;
}

}  // namespace

void BatchScheduler::run(const std::function<void()>& run) {
  this->run(run, nullptr);
}

void BatchScheduler::run(const std::function<void()>& run, StreamOutbox* outbox) {
  Work work(run, outbox);
  {
    std::lock_guard lock(mutex_);
    work_.push_back(&work);
  }
  changed_.notify_all();
  const std::exception_ptr posted_error = run_posted(outbox);
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return work.done; });
  if (posted_error) std::rethrow_exception(posted_error);
  if (work.error) std::rethrow_exception(work.error);
}

BatchScheduler::Outcome BatchScheduler::generate(const Stream& stream) {
  if ((drafts_alone_ && stream.session.speculator()) || stream.limits.max_new_tokens == 0) {
    Outcome outcome;
    run([&] { outcome = alone(stream); }, stream.outbox);
    return outcome;
  }
  Waiter waiter(stream);
  {
    std::lock_guard lock(mutex_);
    arriving_.push_back(&waiter);
  }
  changed_.notify_all();
  const std::exception_ptr posted_error = run_posted(stream.outbox);
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return waiter.done; });
  if (posted_error) std::rethrow_exception(posted_error);
  if (waiter.error) std::rethrow_exception(waiter.error);
  return std::move(waiter.outcome);
}

BatchScheduler::Outcome BatchScheduler::alone(const Stream& stream) {
  Outcome outcome;
  try {
    auto prompt = stream.session.set_context(stream.prompt, std::numeric_limits<int64_t>::max(),
                                             [&](int64_t, std::span<const float>) {
                                               if (stream.cancelled && stream.cancelled())
                                                 throw ScoringCancelled();
                                             });
    outcome.reused = prompt.reused;
    outcome.prompt_done = std::chrono::steady_clock::now();
    TokenLogitsCallback on_token = stream.on_token;
    if (stream.outbox && on_token)
      on_token = [&](int32_t token, std::span<const float> logits) {
        return stream.on_token(token, logits) && !stream.outbox->failed();
      };
    outcome.generation =
        continue_generation(stream.session, stream.sampler, stream.prompt, std::move(prompt.logits),
                            stream.limits, on_token, stream.need);
  } catch (const ScoringCancelled&) {
    outcome.prompt_done = std::chrono::steady_clock::now();
    outcome.generation.reason = StopReason::cancelled;
  }
  return outcome;
}

void BatchScheduler::loop() {
  // The OpenMP thread count is per thread: the engine set it on the thread
  // that loaded the model, not on this one.
  omp_set_num_threads(effective_threads(engine_.profile()));
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] {
      return closing_ || !work_.empty() || !arriving_.empty() || !running_.empty();
    });
    if (closing_ && work_.empty() && arriving_.empty() && running_.empty()) return;
    // Work first, between two steps (a slot chosen before its stream comes).
    while (!work_.empty()) {
      Work* work = work_.front();
      work_.pop_front();
      lock.unlock();
      std::exception_ptr error;
      try {
        work->run();
      } catch (...) {
        error = std::current_exception();
      }
      // Its caller leaves run_posted() and waits for `done`.
      if (work->outbox) work->outbox->close();
      lock.lock();
      work->error = error;
      work->done = true;
      changed_.notify_all();
    }
    std::vector<Waiter*> arrived;
    arrived.swap(arriving_);
    lock.unlock();
    admit(arrived);
    if (!running_.empty()) step();
    lock.lock();
  }
}

void BatchScheduler::admit(std::vector<Waiter*>& arrived) {
  for (Waiter* w : arrived) {
    const Stream& s = w->stream;
    try {
      w->id = batch_.add(s.session, s.sampler, s.prompt, s.limits, s.on_token, s.need);
      w->outcome.reused = static_cast<int64_t>(s.session.tokens().size());
      running_.push_back(w);
    } catch (...) {
      if (s.outbox) s.outbox->close();
      std::lock_guard lock(mutex_);
      w->error = std::current_exception();
      w->done = true;
      changed_.notify_all();
    }
  }
}

void BatchScheduler::step() {
  for (Waiter* w : running_) {
    const Stream& s = w->stream;
    if ((s.cancelled && s.cancelled()) || (s.outbox && s.outbox->failed())) batch_.cancel(w->id);
  }
  std::exception_ptr failed;
  try {
    batch_.step();
  } catch (...) {
    // No stream changed; each request reports the failure.
    failed = std::current_exception();
    for (Waiter* w : running_) batch_.cancel(w->id);
  }
  const auto now = std::chrono::steady_clock::now();
  std::vector<Waiter*> ended;
  for (Waiter* w : running_) {
    if (!w->prompt_done &&
        (batch_.finished(w->id) || w->stream.session.tokens().size() >= w->stream.prompt.size())) {
      w->prompt_done = true;
      w->outcome.prompt_done = now;
    }
    if (!batch_.finished(w->id)) continue;
    w->outcome.generation = batch_.result(w->id);
    w->error = failed ? failed : batch_.error(w->id);
    batch_.forget(w->id);
    ended.push_back(w);
  }
  if (ended.empty()) return;
  // Out of running_ before their requests may see them done (and go).
  std::erase_if(running_, [&](Waiter* w) { return std::ranges::find(ended, w) != ended.end(); });
  // Each request runs what its stream posted last, then waits for `done`.
  for (Waiter* w : ended)
    if (w->stream.outbox) w->stream.outbox->close();
  {
    std::lock_guard lock(mutex_);
    for (Waiter* w : ended) w->done = true;
  }
  changed_.notify_all();
}

}  // namespace glmrt::serve
