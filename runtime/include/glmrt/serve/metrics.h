// What GET /metrics reports, in Prometheus' text format: requests by route
// and status, the queue, tokens and tokens/s (all requests, and the last
// one), the expert cache's hit rate and bytes read, memory, and speculative
// decoding's acceptance when the profile drafts. The model
// thread publishes a snapshot after every request, so a scrape never reads
// the engine while it runs.
#pragma once

#include <glmrt/draft/draft_stats.h>
#include <glmrt/experts/expert_store.h>
#include <glmrt/generate/session.h>

#include <chrono>
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace glmrt::serve {

struct ModelSnapshot {
  SessionStats totals;       // since the server started
  SessionStats last;         // the last request that ran the model
  ExpertStoreStats experts;  // since the server started
  uint64_t budget_peak_bytes = 0;
  int64_t cached_tokens = 0;          // tokens the sessions' KV caches hold
  int64_t slots_occupied = 0;         // sessions (--slots) holding a conversation
  int64_t slots = 0;                  // sessions kept (--slots, else memory.kv_slots)
  std::vector<int64_t> slot_tokens;   // tokens each session's KV cache holds
  int64_t last_generated_tokens = 0;  // tokens the last request that generated any generated
  std::optional<DraftStats> draft;    // since the server started, when the session drafts
};

/// The HTTP side: connections and the request bodies held in memory.
struct HttpGauges {
  size_t open_connections = 0;
  uint64_t body_bytes_held = 0;  // reserved for bodies being read or answered
  uint64_t body_bytes_peak = 0;  // the most ever held (at most --max-body-memory)
};

/// A Prometheus histogram of seconds with fixed bucket bounds.
class LatencyHistogram {
 public:
  void observe(double seconds);
  /// `name`_bucket{le=...}, `name`_sum and `name`_count lines, with HELP and TYPE.
  std::string prometheus_text(std::string_view name, std::string_view help) const;

 private:
  static constexpr double kBounds[] = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30};
  uint64_t counts_[std::size(kBounds)] = {};
  uint64_t count_ = 0;
  double sum_ = 0;
};

class Metrics {
 public:
  /// Time from a request's arrival to its first generated token, and between
  /// two generated tokens of one answer.
  void observe_first_token(double seconds);
  void observe_token_gap(double seconds);
  void set_http(const HttpGauges& gauges);
  void count_request(std::string_view route, int status);
  /// Jobs waiting and running (at most --parallel).
  void set_queue(size_t waiting, size_t running);
  /// A running job holds the session (slot) `slot`, or let it go.
  void set_slot_processing(int64_t slot, bool processing);
  /// The slots running jobs hold.
  std::set<int64_t> processing_slots() const;
  void publish(const ModelSnapshot& snapshot);
  ModelSnapshot snapshot() const;
  std::string prometheus_text(std::string_view model_name) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  size_t waiting_ = 0;
  size_t running_ = 0;
  std::set<int64_t> processing_;
  ModelSnapshot snapshot_;
  HttpGauges http_;
  LatencyHistogram first_token_, token_gap_;
};

/// Times the tokens of one answer into `metrics` (may be null: nothing).
class TokenTimer {
 public:
  TokenTimer(Metrics* metrics, std::chrono::steady_clock::time_point start)
      : metrics_(metrics), last_(start) {}
  void token();

 private:
  Metrics* metrics_;
  std::chrono::steady_clock::time_point last_;
  bool first_ = true;
};

}  // namespace glmrt::serve
