#include <glmrt/base/error.h>
#include <glmrt/calibrate/second_moment_collector.h>

#include <fmt/format.h>

#include <limits>

namespace glmrt {

SecondMomentKey second_moment_key(const MatmulSite& site) {
  SecondMomentKey k;
  k.name = matmul_weight_name(site);
  k.layer = site.layer;
  const std::string_view w = site.weight;
  const bool gate_or_up = w == "gate_proj.weight" || w == "up_proj.weight";
  if ((site.module == "self_attn" &&
       (w == "q_a_proj.weight" || w == "q_proj.weight" || w == "kv_a_proj_with_mqa.weight")) ||
      (site.module == "self_attn.indexer" && (w == "wk.weight" || w == "weights_proj.weight"))) {
    k.name = fmt::format("model.layers.{}.input_layernorm", site.layer);
    k.source = site.module == "self_attn" && w == "kv_a_proj_with_mqa.weight";
  } else if (gate_or_up && site.expert >= 0) {
    // Gate and up read the same rows: one moment, accumulated at gate.
    k.name = fmt::format("model.layers.{}.mlp.experts.{}.gate_up_proj", site.layer, site.expert);
    k.source = w == "gate_proj.weight";
    k.routed_level = 1;
    k.fallback = fmt::format("model.layers.{}.post_attention_layernorm", site.layer);
  } else if (gate_or_up && (site.module == "mlp" || site.module == "mlp.shared_experts")) {
    k.name = fmt::format("model.layers.{}.post_attention_layernorm", site.layer);
    k.source = w == "gate_proj.weight";
  } else {
    k.routed_level = site.expert >= 0 ? 2 : 0;
  }
  return k;
}

SecondMomentCollector::SecondMomentCollector(int64_t max_cols, uint64_t budget_bytes,
                                             int first_order, int lm_head_order,
                                             std::map<int, int> left_out)
    : max_cols_(max_cols),
      budget_(budget_bytes),
      first_order_(first_order),
      lm_head_order_(lm_head_order),
      frontier_(lm_head_order + 1),
      left_out_(std::move(left_out)) {}

void SecondMomentCollector::on_matmul_input(const MatmulSite& site, std::span<const float> rows,
                                            int64_t n) {
  if (n <= 0) return;
  const auto cols = static_cast<int64_t>(rows.size()) / n;
  const SecondMomentKey key = second_moment_key(site);
  const int order = order_of(key.layer);
  Accumulator* acc = nullptr;
  {
    const std::lock_guard lock(mutex_);
    weight_keys_.emplace(matmul_weight_name(site), key.name);
    if (!key.fallback.empty()) weight_fallbacks_.emplace(matmul_weight_name(site), key.fallback);
    if (!key.source || cols > max_cols_ || order < first_order_ || order >= frontier_ ||
        (key.routed_level > 0 && left_out_.count(order) && key.routed_level <= left_out_.at(order)))
      return;
    auto it = sums_.find(key.name);
    if (it == sums_.end()) {
      const uint64_t bytes = static_cast<uint64_t>(cols * cols) * sizeof(float);
      if (used_ + bytes > budget_) {
        // This layer and the later ones wait for the next pass.
        frontier_ = order;
        for (auto at = sums_.begin(); at != sums_.end();)
          if (at->second->order >= order) {
            used_ -= static_cast<uint64_t>(at->second->moment.sums.size()) * sizeof(float);
            at = sums_.erase(at);
          } else {
            ++at;
          }
        return;
      }
      auto fresh = std::make_unique<Accumulator>();
      fresh->order = order;
      fresh->moment.cols = cols;
      fresh->moment.sums.assign(static_cast<size_t>(cols * cols), 0.f);
      used_ += bytes;
      it = sums_.emplace(key.name, std::move(fresh)).first;
    }
    acc = it->second.get();
    if (acc->moment.cols != cols)
      fail("second moments: {} was shown rows of {} values, earlier of {}", key.name, cols,
           acc->moment.cols);
    // Added under the lock (experts on other threads wait): the sum runs
    // on the OpenMP threads below.
    float* h = acc->moment.sums.data();
    // The upper triangle, one row of x at a time (mirrored in take()).
#pragma omp parallel for schedule(dynamic, 16)
    for (int64_t i = 0; i < cols; ++i) {
      float* h_i = h + i * cols;
      for (int64_t r = 0; r < n; ++r) {
        const float* x = rows.data() + r * cols;
        const float xi = x[i];
        if (xi == 0.f) continue;
        for (int64_t j = i; j < cols; ++j) h_i[j] += xi * x[j];
      }
    }
    acc->moment.rows += n;
  }
}

int SecondMomentCollector::frontier() const {
  const std::lock_guard lock(mutex_);
  return frontier_;
}

std::map<std::string, SecondMoment> SecondMomentCollector::take() {
  const std::lock_guard lock(mutex_);
  std::map<std::string, SecondMoment> out;
  for (auto& [name, acc] : sums_) {
    SecondMoment m = std::move(acc->moment);
    for (int64_t i = 0; i < m.cols; ++i)
      for (int64_t j = i + 1; j < m.cols; ++j) m.sums[j * m.cols + i] = m.sums[i * m.cols + j];
    out.emplace(name, std::move(m));
  }
  sums_.clear();
  used_ = 0;
  return out;
}

std::map<std::string, std::string> SecondMomentCollector::weight_keys() const {
  const std::lock_guard lock(mutex_);
  return weight_keys_;
}

std::map<std::string, std::string> SecondMomentCollector::weight_fallbacks() const {
  const std::lock_guard lock(mutex_);
  return weight_fallbacks_;
}

}  // namespace glmrt
