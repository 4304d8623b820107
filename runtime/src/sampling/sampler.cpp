#include <glmrt/base/error.h>
#include <glmrt/sampling/sampler.h>
#include <glmrt/sampling/sampling_limits.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_set>

namespace glmrt {

Sampler::Sampler(SamplingParams params, std::shared_ptr<TokenConstraint> constraint)
    : params_(params), constraint_(std::move(constraint)), rng_(params.seed) {
  check_sampling_params(params_, "sampling");
}

std::vector<TokenProbability> Sampler::distribution(std::span<const float> logits,
                                                    std::span<const int32_t> context,
                                                    std::span<const int32_t> generated) const {
  if (logits.empty())
    fail("sampling: the logits are empty (expected one value per vocabulary token)");
  std::vector<double> l(logits.begin(), logits.end());
  const int32_t V = static_cast<int32_t>(l.size());
  if (params_.repetition_penalty != 1.0) {
    std::unordered_set<int32_t> seen(context.begin(), context.end());
    for (int32_t t : seen)
      if (t >= 0 && t < V)
        l[t] = l[t] > 0 ? l[t] / params_.repetition_penalty : l[t] * params_.repetition_penalty;
  }
  if (params_.presence_penalty != 0.0) {
    std::unordered_set<int32_t> seen(generated.begin(), generated.end());
    for (int32_t t : seen)
      if (t >= 0 && t < V) l[t] -= params_.presence_penalty;
  }
  if (params_.frequency_penalty != 0.0) {  // once per occurrence, as OpenAI defines it
    for (int32_t t : generated)
      if (t >= 0 && t < V) l[t] -= params_.frequency_penalty;
  }
  for (const auto& [t, bias] : params_.logit_bias)
    if (t >= 0 && t < V)
      l[t] = bias <= -100 ? -std::numeric_limits<double>::infinity() : l[t] + bias;
  if (constraint_) {
    // Right after logit_bias, as a ban: what is left keeps its relative odds.
    const std::span<const uint8_t> allowed = constraint_->allowed(generated);
    if (allowed.size() != static_cast<size_t>(V))
      fail("sampling: the token constraint covers {} tokens, the logits {}", allowed.size(), V);
    constexpr double kBanned = -std::numeric_limits<double>::infinity();
    bool any_allowed = false, any_left = false;
    for (int32_t t = 0; t < V; ++t) {
      if (!allowed[t]) {
        l[t] = kBanned;
        continue;
      }
      any_allowed = true;
      any_left = any_left || l[t] != kBanned;  // NaN counts: the check below names it
    }
    if (!any_allowed) fail("sampling: the token constraint allows no token at all");
    if (!any_left)
      throw UnsatisfiableConstraint(fmt::format(
          "`logit_bias` bans every token the output format allows after {} token{} of the answer",
          generated.size(), generated.size() == 1 ? "" : "s"));
  }

  if (params_.temperature == 0.0) {  // the first of equal maxima, as torch.argmax
    const int32_t best = static_cast<int32_t>(std::max_element(l.begin(), l.end()) - l.begin());
    if (!std::isfinite(l[best]))
      throw NonFiniteLogits(
          fmt::format("sampling: the best logit is {} (expected a finite value)", l[best]));
    return {{best, 1.0}};
  }
  std::vector<int32_t> order(V);
  std::iota(order.begin(), order.end(), 0);
  // Candidates sorted by logit, best first (ties by token id, deterministic).
  auto by_logit = [&](int32_t a, int32_t b) { return l[a] > l[b] || (l[a] == l[b] && a < b); };
  size_t keep = static_cast<size_t>(V);
  if (params_.top_k > 0 && static_cast<size_t>(params_.top_k) < keep) keep = params_.top_k;
  std::partial_sort(order.begin(), order.begin() + keep, order.end(), by_logit);
  order.resize(keep);

  std::vector<TokenProbability> dist;
  const double max_logit = l[order[0]];
  if (!std::isfinite(max_logit))
    throw NonFiniteLogits(
        fmt::format("sampling: the best logit is {} (expected a finite value)", max_logit));
  double total = 0;
  for (int32_t t : order) {
    const double p = std::exp((l[t] - max_logit) / params_.temperature);
    dist.push_back({t, p});
    total += p;
  }
  for (auto& d : dist) d.probability /= total;

  if (params_.top_p < 1.0) {  // smallest prefix whose mass reaches top_p
    double cumulative = 0;
    size_t n = 0;
    while (n < dist.size()) {
      cumulative += dist[n++].probability;
      if (cumulative >= params_.top_p) break;
    }
    dist.resize(n);
  }
  if (params_.min_p > 0.0) {  // relative to the most probable token
    const double floor = params_.min_p * dist[0].probability;
    dist.erase(std::remove_if(dist.begin() + 1, dist.end(),
                              [&](const TokenProbability& d) { return d.probability < floor; }),
               dist.end());
  }
  // Tokens whose probability underflowed to 0 (e.g. logits of -inf) can never
  // be drawn; dropping them keeps sample()'s rounding fallback on a real token.
  dist.erase(std::remove_if(dist.begin() + 1, dist.end(),
                            [](const TokenProbability& d) { return d.probability <= 0.0; }),
             dist.end());
  double kept = 0;
  for (const auto& d : dist) kept += d.probability;
  for (auto& d : dist) d.probability /= kept;
  return dist;
}

double Sampler::uniform() {
  return std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
}

int32_t Sampler::sample(std::span<const float> logits, std::span<const int32_t> context,
                        std::span<const int32_t> generated) {
  const auto dist = distribution(logits, context, generated);
  if (dist.size() == 1) return dist[0].token;
  double u = std::uniform_real_distribution<double>(0.0, 1.0)(rng_);
  for (const auto& d : dist) {
    if (u < d.probability) return d.token;
    u -= d.probability;
  }
  return dist.back().token;  // rounding left a sliver of mass
}

}  // namespace glmrt
