#include <glmrt/base/error.h>
#include <glmrt/calibrate/calibrate.h>
#include <glmrt/calibrate/importance_collector.h>
#include <glmrt/calibrate/second_moment_collector.h>

#include <fmt/format.h>

#include <algorithm>
#include <set>

namespace glmrt {
namespace {

// Detaches the observer however the run ends.
class ActivationObserverScope {
 public:
  ActivationObserverScope(Model& model, ActivationObserver* observer) : model_(model) {
    model_.set_activation_observer(observer);
  }
  ~ActivationObserverScope() { model_.set_activation_observer(nullptr); }
  ActivationObserverScope(const ActivationObserverScope&) = delete;
  ActivationObserverScope& operator=(const ActivationObserverScope&) = delete;

 private:
  Model& model_;
};

// Shows every product to both collectors.
class BothCollectors : public ActivationObserver {
 public:
  BothCollectors(ActivationObserver* first, ActivationObserver* second)
      : first_(first), second_(second) {}
  void on_matmul_input(const MatmulSite& site, std::span<const float> rows, int64_t n) override {
    if (first_) first_->on_matmul_input(site, rows, n);
    if (second_) second_->on_matmul_input(site, rows, n);
  }

 private:
  ActivationObserver *first_, *second_;
};

// One run over the tokens with `observer` attached.
void run_calibration_windows(Model& model, const std::function<KvCache()>& new_cache,
                             std::span<const int32_t> tokens, const CalibrationOptions& options,
                             ActivationObserver* observer,
                             const std::function<void(int64_t, int64_t)>& progress) {
  if (options.window < 1) fail("calibrate: the window must hold at least one token");
  if (tokens.empty()) fail("calibrate: no calibration tokens");
  const int64_t T = std::ssize(tokens), D = model.config().hidden_size;
  ActivationObserverScope scope(model, observer);
  for (int64_t first = 0; first < T; first += options.window) {
    const int64_t n = std::min(options.window, T - first);
    const auto window = tokens.subspan(static_cast<size_t>(first), static_cast<size_t>(n));
    KvCache cache = new_cache();
    const std::vector<float> hidden = model.forward(cache, window);
    const std::vector<float> normed = model.final_norm(hidden, n);
    model.head(normed, n);  // lm_head's input
    if (options.mtp && model.has_mtp() && n > 1)
      model.mtp_forward(cache, window.subspan(1),
                        std::span(normed).first(static_cast<size_t>((n - 1) * D)));
    if (progress) progress(first + n, T);
  }
}

}  // namespace

CalibrationSummary calibrate_to_file(Model& model, const std::function<KvCache()>& new_cache,
                                     std::span<const int32_t> tokens,
                                     const CalibrationOptions& options,
                                     const std::filesystem::path& out,
                                     const std::function<void(int64_t, int64_t)>& progress) {
  const ModelConfig& c = model.config();
  // Orders: the decoder layers, the MTP layer(s), lm_head last.
  const int lm_head_order = c.num_hidden_layers + c.num_nextn_predict_layers;
  ImportanceCollector diagonal;
  ImportanceFileWriter writer(out, options.model_folder, options.force_out);
  std::map<std::string, std::string> weight_keys, weight_fallbacks;
  std::map<int, int> left_out;  // layer order -> routed_level left out (second_moment_collector.h)
  CalibrationSummary summary;
  summary.tokens = std::ssize(tokens);
  for (int first = 0; first <= lm_head_order;) {
    SecondMomentCollector moments(options.moments_max_cols, options.moments_budget_bytes, first,
                                  lm_head_order, left_out);
    BothCollectors both(summary.passes == 0 ? &diagonal : nullptr,
                        options.moments_max_cols > 0 ? &moments : nullptr);
    run_calibration_windows(model, new_cache, tokens, options, &both, progress);
    ++summary.passes;
    if (options.moments_max_cols <= 0) break;
    const int frontier = moments.frontier();
    if (frontier == first) {
      // Not even one layer fits: its routed experts' own matrices are left
      // out, gate/up first (they fall back on the layer's shared moments),
      // then down_proj (rtn).
      if (left_out[first] >= 2)
        fail(
            "calibrate: the second moments of layer {} alone need more than the budget of {:.3f} "
            "MB; raise it or lower the widest input collected",
            first, static_cast<double>(options.moments_budget_bytes) / (1 << 20));
      ++left_out[first];
      continue;
    }
    for (const auto& [key, m] : moments.take()) {
      writer.add_moment(key, m.cols, m.rows, m.sums);
      ++summary.moments;
    }
    for (const auto& [weight, key] : moments.weight_keys()) weight_keys.emplace(weight, key);
    for (const auto& [weight, key] : moments.weight_fallbacks())
      weight_fallbacks.emplace(weight, key);
    first = frontier;
  }
  const ImportanceTable table = diagonal.table(std::ssize(tokens));
  summary.matrices = std::ssize(table.entries);
  writer.finish(table, weight_keys, weight_fallbacks);
  return summary;
}

ImportanceTable calibrate(Model& model, const std::function<KvCache()>& new_cache,
                          std::span<const int32_t> tokens, const CalibrationOptions& options,
                          const std::function<void(int64_t, int64_t)>& progress) {
  ImportanceCollector collector;
  run_calibration_windows(model, new_cache, tokens, options, &collector, progress);
  return collector.table(std::ssize(tokens));
}

}  // namespace glmrt
