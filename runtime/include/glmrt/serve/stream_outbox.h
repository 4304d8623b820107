// What a stream's token callback hands from the model thread to its
// request's own thread. The model thread keeps only what decides whether the
// stream goes on (sampling, the answer's text: stop strings, a constrained
// answer's end); the rest of a token's work — the JSON of its event and
// logprobs, handing the event to the HTTP thread — is posted here and run on
// the request's thread while it waits in BatchScheduler::generate(). So N
// streams' formatting runs beside the forward instead of inside it, and no
// stream's client can hold up the model thread.
//
// Why the text stays on the model thread: the verdict (a stop string, the
// end of the turn) needs the answer's text, and detokenizing and parsing a
// token is small next to a forward; handing every token to the request's
// thread and waiting for its verdict would cost a thread wake-up per stream
// per step and let a busy request thread hold up every stream. Measured on
// glm_tiny, 2 chat streams of 450 tokens with top_logprobs 20: the model
// thread's CPU went from 137-144 to 120-126 ticks, the rest now on the
// requests' threads.
//
// Bounded by the answer: at most one entry per generated token (max_tokens,
// or the context), each a token's text and scores — the same order as the
// answer the request holds whole anyway. The request's thread never waits on
// its client (Job::send only queues for the HTTP thread), so it drains as
// fast as the model posts.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>

namespace glmrt::serve {

class StreamOutbox {
 public:
  /// Model thread: `work` runs on the request's thread, after what was posted before.
  void post(std::function<void()> work);
  /// Model thread: the stream ended; nothing more is posted.
  void close();
  /// Model thread: posted work threw; the stream should end (its error is
  /// rethrown by run_until_closed()).
  bool failed() const;
  /// Request's thread: runs the posted work in order until close() and
  /// returns then, everything posted run. After posted work throws, what
  /// follows it is dropped and the exception rethrown once closed.
  void run_until_closed();

 private:
  mutable std::mutex mutex_;
  std::condition_variable posted_;
  std::deque<std::function<void()>> work_;
  std::exception_ptr error_;
  bool closed_ = false;
};

}  // namespace glmrt::serve
