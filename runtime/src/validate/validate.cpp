#include <glmrt/base/error.h>
#include <glmrt/engine/engine.h>
#include <glmrt/validate/oracle.h>

#include <algorithm>
#include <cmath>

namespace glmrt {
namespace {

int32_t argmax(std::span<const float> v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

// KL(p_ref || p_ours) of the two softmaxes, in double.
double kl_divergence(std::span<const double> ref, std::span<const float> ours) {
  const double ref_max = *std::max_element(ref.begin(), ref.end());
  const double our_max = *std::max_element(ours.begin(), ours.end());
  double ref_sum = 0, our_sum = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    ref_sum += std::exp(ref[i] - ref_max);
    our_sum += std::exp(static_cast<double>(ours[i]) - our_max);
  }
  const double ref_log_z = ref_max + std::log(ref_sum), our_log_z = our_max + std::log(our_sum);
  double kl = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    const double log_p = ref[i] - ref_log_z, log_q = ours[i] - our_log_z;
    kl += std::exp(log_p) * (log_p - log_q);
  }
  return std::max(kl, 0.0);
}

void check_ids(const OracleCase& c, int32_t vocab) {
  for (int32_t id : c.full_ids)
    if (id < 0 || id >= vocab)
      fail("case {}: token id {} is outside this model's vocabulary of {}", c.name, id, vocab);
  for (const auto& row : c.logits)
    if (static_cast<int32_t>(row.size()) != vocab)
      fail("case {}: reference logits have {} columns, the model's vocabulary is {}", c.name,
           row.size(), vocab);
}

// The MTP head teacher-forced: position t sees full_ids[t + 1] and the main
// model's hidden state at t.
void check_mtp(Model& model, const OracleCase& c, KvCache& cache, std::span<const float> hidden,
               const ValidateThresholds& th, CaseReport& r) {
  const int64_t rows = static_cast<int64_t>(c.mtp_pred.size());
  const int32_t V = model.config().vocab_size;
  const std::span<const int32_t> next(c.full_ids.data() + 1, rows);
  const auto h = model.mtp_forward(cache, next, hidden.first(rows * model.config().hidden_size));
  const auto logits = model.mtp_logits(h, rows);
  int64_t clear = 0, agree = 0;
  for (int64_t t = 0; t < rows; ++t) {
    if (c.mtp_margin[t] <= th.min_margin) continue;
    ++clear;
    agree += argmax(std::span(logits).subspan(t * V, V)) == c.mtp_pred[t];
  }
  r.mtp_checked = true;
  r.mtp_top1_agree = clear ? static_cast<double>(agree) / clear : 1.0;
}

CaseReport run_case(Engine& engine, const OracleCase& c, const ValidateThresholds& th) {
  Model& model = engine.model();
  const int32_t V = model.config().vocab_size;
  check_ids(c, V);
  CaseReport r;
  r.name = c.name;
  r.rows_total = static_cast<int64_t>(c.full_ids.size());

  // Teacher-forced: every position of full_ids in one batched step.
  {
    KvCache cache = engine.new_cache();
    const auto hidden = model.forward(cache, c.full_ids);
    const auto logits = model.logits(hidden, r.rows_total);
    int64_t clear_rows = 0, agree = 0;
    double kl_sum = 0;
    for (int64_t t = 0; t < r.rows_total; ++t) {
      std::span<const float> ours(logits.data() + t * V, V);
      for (int32_t v = 0; v < V; ++v)
        r.max_abs_dlogit = std::max(r.max_abs_dlogit, std::fabs(ours[v] - c.logits[t][v]));
      kl_sum += kl_divergence(c.logits[t], ours);
      if (c.margin[t] > th.min_margin) {
        ++clear_rows;
        agree += argmax(ours) == c.tf_pred[t];
      }
    }
    r.rows_checked = r.rows_total;
    if (model.has_mtp() && !c.mtp_pred.empty()) check_mtp(model, c, cache, hidden, th, r);
    r.mean_kl = kl_sum / static_cast<double>(r.rows_total);
    r.top1_agree = clear_rows ? static_cast<double>(agree) / clear_rows : 1.0;
  }

  // Greedy: prefill the prompt, then decode one token at a time.
  {
    KvCache cache = engine.new_cache();
    r.greedy_checked = true;
    r.greedy_total = static_cast<int64_t>(c.generated_ids.size());
    auto hidden = model.forward(cache, c.prompt_ids);
    int32_t next = argmax(
        model.logits(std::span(hidden).subspan(hidden.size() - model.config().hidden_size), 1));
    for (int64_t i = 0; i < r.greedy_total; ++i) {
      r.greedy_identical += next == c.generated_ids[i];
      if (i + 1 == r.greedy_total) break;
      hidden = model.forward(cache, std::span(&next, 1));
      next = argmax(model.logits(hidden, 1));
    }
  }

  r.pass = r.top1_agree >= th.min_top1 && r.max_abs_dlogit <= th.max_dlogit &&
           (!r.mtp_checked || r.mtp_top1_agree >= th.min_top1) && r.mean_kl <= th.max_kl &&
           (!th.greedy_identical || r.greedy_identical == r.greedy_total);
  return r;
}

}  // namespace

ValidationReport validate(Engine& engine, const std::vector<OracleCase>& cases,
                          const ValidateThresholds& thresholds) {
  ValidationReport report;
  report.thresholds = thresholds;
  report.pass = !cases.empty();
  for (const auto& c : cases) {
    report.cases.push_back(run_case(engine, c, thresholds));
    report.pass = report.pass && report.cases.back().pass;
  }
  return report;
}

}  // namespace glmrt
