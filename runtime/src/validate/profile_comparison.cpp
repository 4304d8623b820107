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

/// Logits [rows, vocab] of `tokens` appended to `cache`: one forward call,
/// or, when the engine routes cache-aware (routing.cache_bias), one decode
/// step per token, as generation runs them (the bias applies only there).
std::vector<float> comparison_logits(Engine& engine, KvCache& cache,
                                     std::span<const int32_t> tokens) {
  Model& model = engine.model();
  if (!model.cache_bias().on())
    return model.logits(model.forward(cache, tokens), static_cast<int64_t>(tokens.size()));
  const Model::DecodeSteps decode_steps(model, true);
  std::vector<float> all;
  for (size_t t = 0; t < tokens.size(); ++t) {
    const auto row = model.logits(model.forward(cache, tokens.subspan(t, 1)), 1);
    all.insert(all.end(), row.begin(), row.end());
  }
  return all;
}

CacheBiasCost cache_bias_cost(Engine& engine, const CacheBiasRouting& before) {
  const CacheBiasRouting& now = engine.model().cache_bias();
  return {now.bias, now.rows - before.rows, now.choices - before.choices,
          now.substitutions - before.substitutions};
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
  const CacheBiasRouting q_before = q.model().cache_bias(), p_before = p.model().cache_bias();
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
      const auto logits_q = comparison_logits(q, cache_q, tokens);
      const auto logits_p = comparison_logits(p, cache_p, tokens);
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
  c.cache_bias_q = cache_bias_cost(q, q_before);
  c.cache_bias_p = cache_bias_cost(p, p_before);
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
