#include <glmrt/base/error.h>
#include <glmrt/validate/profile_comparison.h>

#include <algorithm>
#include <cmath>

namespace glmrt {
namespace {

// log-softmax of one row, in double.
void log_softmax_row(std::span<const float> logits, std::vector<double>& out) {
  out.resize(logits.size());
  double m = -INFINITY;
  for (float v : logits) m = std::max(m, static_cast<double>(v));
  double sum = 0;
  for (float v : logits) sum += std::exp(static_cast<double>(v) - m);
  const double lse = m + std::log(sum);
  for (size_t i = 0; i < logits.size(); ++i) out[i] = static_cast<double>(logits[i]) - lse;
}

size_t top_token(std::span<const float> v) {
  return static_cast<size_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

}  // namespace

ProfileComparison compare_profiles(Engine& q, Engine& p, std::span<const int32_t> ids,
                                   int64_t window, int64_t chunk) {
  if (ids.size() < 2) fail("compare: {} token ids; at least 2 are needed", ids.size());
  if (window < 2) fail("compare: a window of {} tokens; at least 2 are needed", window);
  const int64_t D = q.model().config().hidden_size;
  const int64_t V = q.model().config().vocab_size;
  if (p.model().config().vocab_size != V || p.model().config().hidden_size != D)
    fail("compare: the two profiles load models of different shapes");
  std::vector<double> kls;
  int64_t same = 0, scored = 0;
  double nll_q = 0, nll_p = 0;
  std::vector<double> lq, lp;
  const int64_t n = static_cast<int64_t>(ids.size());
  for (int64_t start = 0; start + 1 < n; start += window) {
    const int64_t len = std::min(window, n - start);
    KvCache cache_q = q.new_cache(), cache_p = p.new_cache();
    const int64_t step = chunk > 0 ? chunk : len;
    for (int64_t at = 0; at < len; at += step) {
      const int64_t rows = std::min(step, len - at);
      const auto tokens = ids.subspan(static_cast<size_t>(start + at), static_cast<size_t>(rows));
      const auto hq = q.model().forward(cache_q, tokens);
      const auto hp = p.model().forward(cache_p, tokens);
      const auto logits_q = q.model().logits(hq, rows);
      const auto logits_p = p.model().logits(hp, rows);
      for (int64_t r = 0; r < rows; ++r) {
        const std::span<const float> rq(logits_q.data() + r * V, V), rp(logits_p.data() + r * V, V);
        log_softmax_row(rq, lq);
        log_softmax_row(rp, lp);
        double kl = 0;
        for (int64_t i = 0; i < V; ++i) kl += std::exp(lp[i]) * (lp[i] - lq[i]);
        kls.push_back(std::max(kl, 0.0));
        same += top_token(rq) == top_token(rp);
        const int64_t next = start + at + r + 1;
        if (next < start + len) {
          const int32_t id = ids[static_cast<size_t>(next)];
          if (id < 0 || id >= V)
            fail("compare: token id {} is outside the vocabulary of {}", id, V);
          nll_q -= lq[static_cast<size_t>(id)];
          nll_p -= lp[static_cast<size_t>(id)];
          ++scored;
        }
      }
    }
  }
  ProfileComparison c;
  c.positions = static_cast<int64_t>(kls.size());
  double sum = 0;
  for (double k : kls) sum += k;
  c.mean_kl = sum / static_cast<double>(kls.size());
  std::vector<double> sorted = kls;
  std::sort(sorted.begin(), sorted.end());
  c.max_kl = sorted.back();
  c.p99_kl = sorted[static_cast<size_t>(std::ceil(0.99 * double(sorted.size()))) - 1];
  c.same_top1 = static_cast<double>(same) / static_cast<double>(kls.size());
  if (scored) {
    c.ppl_q = std::exp(nll_q / static_cast<double>(scored));
    c.ppl_p = std::exp(nll_p / static_cast<double>(scored));
  }
  return c;
}

}  // namespace glmrt
