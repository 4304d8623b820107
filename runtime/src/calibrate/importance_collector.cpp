#include <glmrt/base/error.h>
#include <glmrt/calibrate/importance_collector.h>

namespace glmrt {

void ImportanceCollector::on_matmul_input(const MatmulSite& site, std::span<const float> rows,
                                          int64_t n) {
  if (n <= 0) return;
  const std::string name = matmul_weight_name(site);
  const size_t cols = rows.size() / static_cast<size_t>(n);
  // Summed outside the lock: experts on other threads only wait for the add.
  std::vector<double> square(cols, 0.0);
  for (int64_t r = 0; r < n; ++r) {
    const float* x = rows.data() + static_cast<size_t>(r) * cols;
    for (size_t i = 0; i < cols; ++i) square[i] += static_cast<double>(x[i]) * x[i];
  }
  const std::lock_guard lock(mutex_);
  Sums& s = sums_[name];
  if (s.square.empty()) s.square.assign(cols, 0.0);
  if (s.square.size() != cols)
    fail("importance statistics: {} was shown rows of {} values, earlier of {}", name, cols,
         s.square.size());
  for (size_t i = 0; i < cols; ++i) s.square[i] += square[i];
  s.rows += n;
}

ImportanceTable ImportanceCollector::table(int64_t tokens) const {
  const std::lock_guard lock(mutex_);
  ImportanceTable t;
  t.tokens = tokens;
  for (const auto& [name, s] : sums_) {
    ImportanceTable::Entry e;
    e.rows = s.rows;
    e.mean_square.resize(s.square.size());
    for (size_t i = 0; i < s.square.size(); ++i)
      e.mean_square[i] = static_cast<float>(s.square[i] / static_cast<double>(s.rows));
    t.entries.emplace(name, std::move(e));
  }
  return t;
}

}  // namespace glmrt
