#include <glmrt/base/error.h>
#include <glmrt/calibrate/calibrate.h>
#include <glmrt/calibrate/importance_collector.h>

#include <algorithm>

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

}  // namespace

ImportanceTable calibrate(Model& model, const std::function<KvCache()>& new_cache,
                          std::span<const int32_t> tokens, const CalibrationOptions& options,
                          const std::function<void(int64_t, int64_t)>& progress) {
  if (options.window < 1) fail("calibrate: the window must hold at least one token");
  if (tokens.empty()) fail("calibrate: no calibration tokens");
  const int64_t T = std::ssize(tokens), D = model.config().hidden_size;
  ImportanceCollector collector;
  ActivationObserverScope scope(model, &collector);
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
  return collector.table(T);
}

}  // namespace glmrt
