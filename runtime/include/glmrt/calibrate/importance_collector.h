// Accumulates, for every weight whose product it is shown, the sum of x^2 per
// input channel (in double) and the rows seen: the importance statistics of
// importance_file.h. Routed experts count only the rows routed to them.
#pragma once

#include <glmrt/calibrate/importance_file.h>
#include <glmrt/model/activation_observer.h>

#include <map>
#include <mutex>
#include <string>
#include <vector>

namespace glmrt {

class ImportanceCollector : public ActivationObserver {
 public:
  void on_matmul_input(const MatmulSite& site, std::span<const float> rows, int64_t n) override;
  /// The means so far (`tokens` is recorded as given).
  ImportanceTable table(int64_t tokens) const;

 private:
  struct Sums {
    std::vector<double> square;  // [cols]
    int64_t rows = 0;
  };
  mutable std::mutex mutex_;  // experts run side by side
  std::map<std::string, Sums> sums_;
};

}  // namespace glmrt
