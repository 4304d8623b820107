#include <glmrt/base/memory.h>
#include <glmrt/serve/metrics.h>

#include <fmt/format.h>

#include <algorithm>

namespace glmrt::serve {
namespace {

double per_second(int64_t tokens, double seconds) {
  return seconds > 0 ? static_cast<double>(tokens) / seconds : 0.0;
}

// Label values escape backslash, quote and newline.
std::string label(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    out += c == '\n' ? 'n' : c;
  }
  return out;
}

class Writer {
 public:
  void metric(std::string_view name, std::string_view type, std::string_view help, double value,
              std::string_view labels = {}) {
    header(name, type, help);
    sample(name, value, labels);
  }
  void header(std::string_view name, std::string_view type, std::string_view help) {
    text_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
  }
  void sample(std::string_view name, double value, std::string_view labels = {}) {
    text_ += labels.empty() ? fmt::format("{} {}\n", name, value)
                            : fmt::format("{}{{{}}} {}\n", name, labels, value);
  }
  std::string take() { return std::move(text_); }

 private:
  std::string text_;
};

double ratio(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// Speculative decoding (plugins.draft): what was proposed and accepted.
void write_draft(Writer& w, const DraftStats& d) {
  w.metric("glmrt_draft_info", "gauge", "the drafter the profile names", 1,
           fmt::format("drafter=\"{}\",adaptive=\"{}\"", label(d.drafter), d.adaptive));
  w.metric("glmrt_draft_forwards_total", "counter", "decode steps (verification forwards)",
           static_cast<double>(d.forwards));
  w.metric("glmrt_draft_decided_tokens_total", "counter",
           "tokens those steps decided (accepted drafts + one)", static_cast<double>(d.decided));
  w.metric("glmrt_draft_proposed_total", "counter", "drafts verified",
           static_cast<double>(d.proposed));
  w.metric("glmrt_draft_accepted_total", "counter", "drafts accepted",
           static_cast<double>(d.accepted));
  w.metric("glmrt_draft_acceptance_rate", "gauge", "accepted / proposed since start",
           ratio(d.accepted, d.proposed));
  w.metric("glmrt_draft_tokens_per_forward", "gauge", "tokens decided per decode step",
           d.tokens_per_forward());
  w.header("glmrt_draft_position_acceptance_rate", "gauge",
           "acceptance of the k-th draft of a step, when it was judged");
  for (size_t k = 0; k < d.judged_at.size() && k < d.accepted_at.size(); ++k)
    w.sample("glmrt_draft_position_acceptance_rate", ratio(d.accepted_at[k], d.judged_at[k]),
             fmt::format("position=\"{}\"", k + 1));
}

}  // namespace

void Metrics::count_request(std::string_view route, int status) {
  std::lock_guard lock(mutex_);
  ++requests_[{std::string(route), status}];
}

void LatencyHistogram::observe(double seconds) {
  for (size_t i = 0; i < std::size(kBounds); ++i)
    if (seconds <= kBounds[i]) ++counts_[i];
  ++count_;
  sum_ += seconds;
}

std::string LatencyHistogram::prometheus_text(std::string_view name, std::string_view help) const {
  std::string text = fmt::format("# HELP {} {}\n# TYPE {} histogram\n", name, help, name);
  for (size_t i = 0; i < std::size(kBounds); ++i)
    text += fmt::format("{}_bucket{{le=\"{}\"}} {}\n", name, kBounds[i], counts_[i]);
  text += fmt::format("{}_bucket{{le=\"+Inf\"}} {}\n{}_sum {}\n{}_count {}\n", name, count_, name,
                      sum_, name, count_);
  return text;
}

void Metrics::observe_first_token(double seconds) {
  std::lock_guard lock(mutex_);
  first_token_.observe(seconds);
}

void Metrics::observe_token_gap(double seconds) {
  std::lock_guard lock(mutex_);
  token_gap_.observe(seconds);
}

void TokenTimer::token() {
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - last_).count();
  last_ = now;
  if (!metrics_) return;
  if (first_)
    metrics_->observe_first_token(seconds);
  else
    metrics_->observe_token_gap(seconds);
  first_ = false;
}

void Metrics::set_http(const HttpGauges& gauges) {
  std::lock_guard lock(mutex_);
  http_ = gauges;
}

void Metrics::set_queue(size_t waiting, size_t running) {
  std::lock_guard lock(mutex_);
  waiting_ = waiting;
  running_ = running;
}

void Metrics::set_slot_processing(int64_t slot, bool processing) {
  std::lock_guard lock(mutex_);
  if (processing)
    processing_.insert(slot);
  else
    processing_.erase(slot);
}

std::set<int64_t> Metrics::processing_slots() const {
  std::lock_guard lock(mutex_);
  return processing_;
}

void Metrics::publish(const ModelSnapshot& snapshot) {
  std::lock_guard lock(mutex_);
  snapshot_ = snapshot;
}

ModelSnapshot Metrics::snapshot() const {
  std::lock_guard lock(mutex_);
  return snapshot_;
}

std::string Metrics::prometheus_text(std::string_view model_name) const {
  std::unique_lock lock(mutex_);
  const ModelSnapshot s = snapshot_;
  const auto requests = requests_;
  const size_t waiting = waiting_;
  const size_t running = running_;
  const HttpGauges http = http_;
  const LatencyHistogram first_token = first_token_, token_gap = token_gap_;
  lock.unlock();

  Writer w;
  w.metric("glmrt_info", "gauge", "the model served", 1,
           fmt::format("model=\"{}\"", label(model_name)));
  w.header("glmrt_requests_total", "counter", "HTTP requests answered, by route and status");
  for (const auto& [key, count] : requests)
    w.sample("glmrt_requests_total", static_cast<double>(count),
             fmt::format("route=\"{}\",status=\"{}\"", label(key.first), key.second));
  w.metric("glmrt_http_open_connections", "gauge", "connections open (being read or answered)",
           static_cast<double>(http.open_connections));
  w.metric("glmrt_http_body_bytes", "gauge", "request body bytes held now (reserved)",
           static_cast<double>(http.body_bytes_held));
  w.metric("glmrt_http_body_bytes_peak", "gauge",
           "the most request body bytes held at once (bounded by --max-body-memory)",
           static_cast<double>(http.body_bytes_peak));
  w.metric("glmrt_queue_waiting", "gauge", "requests waiting for the model",
           static_cast<double>(waiting));
  w.metric("glmrt_queue_running", "gauge", "requests running on the model (at most --parallel)",
           static_cast<double>(running));
  const SessionStats& t = s.totals;
  w.metric("glmrt_prompt_tokens_total", "counter", "prompt tokens computed (prefill)",
           static_cast<double>(t.prefilled_tokens));
  w.metric("glmrt_reused_tokens_total", "counter", "prompt tokens taken from the KV cache",
           static_cast<double>(t.reused_tokens));
  w.metric("glmrt_generated_tokens_total", "counter", "tokens decoded",
           static_cast<double>(t.decoded_tokens));
  w.metric("glmrt_prefill_seconds_total", "counter", "time spent in prefill", t.prefill_seconds);
  w.metric("glmrt_decode_seconds_total", "counter", "time spent decoding", t.decode_seconds);
  w.metric("glmrt_prefill_tokens_per_second", "gauge", "prefill speed over all requests",
           per_second(t.prefilled_tokens, t.prefill_seconds));
  w.metric("glmrt_decode_tokens_per_second", "gauge", "decode speed over all requests",
           per_second(t.decoded_tokens, t.decode_seconds));
  const SessionStats& l = s.last;
  w.metric("glmrt_last_request_prefill_tokens_per_second", "gauge",
           "prefill speed of the last request", per_second(l.prefilled_tokens, l.prefill_seconds));
  w.metric("glmrt_last_request_decode_tokens_per_second", "gauge",
           "decode speed of the last request", per_second(l.decoded_tokens, l.decode_seconds));
  w.metric("glmrt_last_request_generated_tokens", "gauge", "tokens the last request generated",
           static_cast<double>(s.last_generated_tokens));
  w.metric("glmrt_kv_cached_tokens", "gauge", "tokens the sessions' KV caches hold",
           static_cast<double>(s.cached_tokens));
  w.metric("glmrt_kv_slots_occupied", "gauge", "cached conversations (of glmrt_kv_slots)",
           static_cast<double>(s.slots_occupied));
  w.metric("glmrt_kv_slots", "gauge",
           "conversations kept cached (--slots, else the profile's memory.kv_slots)",
           static_cast<double>(s.slots));
  w.metric("glmrt_expert_cache_hits_total", "counter", "routed experts found in memory",
           static_cast<double>(s.experts.hits));
  w.metric("glmrt_expert_cache_misses_total", "counter", "routed experts read from disk",
           static_cast<double>(s.experts.misses));
  w.metric("glmrt_expert_pinned_hits_total", "counter", "routed experts found pinned in memory",
           static_cast<double>(s.experts.pinned_hits));
  w.metric("glmrt_expert_cache_hit_rate", "gauge",
           "(pinned hits + hits) / every lookup since start (0 before any)", s.experts.hit_rate());
  w.metric("glmrt_expert_bytes_read_total", "counter", "bytes of experts read from disk",
           static_cast<double>(s.experts.bytes_read));
  w.metric("glmrt_resident_memory_bytes", "gauge", "resident set size now",
           static_cast<double>(current_rss_bytes()));
  w.metric("glmrt_peak_resident_memory_bytes", "gauge", "largest resident set size so far",
           static_cast<double>(std::max(peak_rss_bytes(), current_rss_bytes())));
  w.metric("glmrt_budget_peak_bytes", "gauge", "the memory budget's peak",
           static_cast<double>(s.budget_peak_bytes));
  if (s.draft) write_draft(w, *s.draft);
  return w.take() +
         first_token.prometheus_text("glmrt_time_to_first_token_seconds",
                                     "from a request's arrival to its first generated token") +
         token_gap.prometheus_text("glmrt_inter_token_latency_seconds",
                                   "between two generated tokens of one answer");
}

}  // namespace glmrt::serve
