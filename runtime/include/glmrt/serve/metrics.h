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

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace glmrt::serve {

struct ModelSnapshot {
  SessionStats totals;       // since the server started
  SessionStats last;         // the last request that ran the model
  ExpertStoreStats experts;  // since the server started
  uint64_t budget_peak_bytes = 0;
  int64_t cached_tokens = 0;          // tokens the session's KV cache holds
  int64_t last_generated_tokens = 0;  // tokens the last request that generated any generated
  std::optional<DraftStats> draft;    // since the server started, when the session drafts
};

/// The HTTP side: connections and the request bodies held in memory.
struct HttpGauges {
  size_t open_connections = 0;
  uint64_t body_bytes_held = 0;  // reserved for bodies being read or answered
  uint64_t body_bytes_peak = 0;  // the most ever held (at most --max-body-memory)
};

class Metrics {
 public:
  void set_http(const HttpGauges& gauges);
  void count_request(std::string_view route, int status);
  void set_queue(size_t waiting, bool running);
  void publish(const ModelSnapshot& snapshot);
  ModelSnapshot snapshot() const;
  std::string prometheus_text(std::string_view model_name) const;

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, int>, uint64_t> requests_;
  size_t waiting_ = 0;
  bool running_ = false;
  ModelSnapshot snapshot_;
  HttpGauges http_;
};

}  // namespace glmrt::serve
