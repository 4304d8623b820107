#include <glmrt/draft/rejection_sampling.h>

#include <algorithm>
#include <unordered_map>
#include <vector>

namespace glmrt {
namespace {

/// q looked up by token: a scan for short lists, a map for long (dense) ones.
class QLookup {
 public:
  explicit QLookup(const DraftDistribution& q) : q_(q) {
    if (q.ids.size() > kScanLimit) {
      map_.reserve(q.ids.size());
      for (size_t i = 0; i < q.ids.size(); ++i) map_[q.ids[i]] = q.probs[i];
    }
  }
  double operator()(int32_t t) const {
    if (q_.ids.empty()) return t == q_.token ? 1.0 : 0.0;
    if (map_.empty()) return q_.at(t);
    const auto it = map_.find(t);
    return it == map_.end() ? 0.0 : it->second;
  }

 private:
  static constexpr size_t kScanLimit = 32;
  const DraftDistribution& q_;
  std::unordered_map<int32_t, double> map_;
};

}  // namespace

double DraftDistribution::at(int32_t t) const {
  if (ids.empty()) return t == token ? 1.0 : 0.0;
  for (size_t i = 0; i < ids.size(); ++i)
    if (ids[i] == t) return probs[i];
  return 0.0;
}

DraftVerdict verify_draft(std::span<const TokenProbability> p, const DraftDistribution& q,
                          const std::function<double()>& uniform) {
  const QLookup q_of(q);
  double p_draft = 0.0;
  for (const TokenProbability& e : p)
    if (e.token == q.token) p_draft = e.probability;
  const double q_draft = q_of(q.token);
  if (p_draft > 0.0 && (p_draft >= q_draft || uniform() * q_draft < p_draft))
    return {true, q.token};

  // Rejected: the residual max(0, p - q), over p's support (p = 0 elsewhere).
  std::vector<double> residual(p.size());
  double total = 0.0;
  size_t nonzero = 0, last = 0;
  for (size_t i = 0; i < p.size(); ++i) {
    residual[i] = std::max(0.0, p[i].probability - q_of(p[i].token));
    total += residual[i];
    if (residual[i] > 0.0) ++nonzero, last = i;
  }
  if (nonzero == 0) {
    // p <= q everywhere: then p == q and rejection had probability 0; only
    // rounding gets here. p itself is the right law.
    for (size_t i = 0; i < p.size(); ++i) residual[i] = p[i].probability;
    total = 1.0;
    nonzero = p.size();
    last = p.size() - 1;
  }
  if (nonzero == 1) return {false, p[last].token};
  double u = uniform() * total;
  for (size_t i = 0; i < p.size(); ++i) {
    if (residual[i] <= 0.0) continue;
    if (u < residual[i]) return {false, p[i].token};
    u -= residual[i];
  }
  return {false, p[last].token};  // rounding left a sliver of mass
}

}  // namespace glmrt
