// One profile against the reference: teacher-forced logits and decisions,
// the MTP head, and greedy decoding, each through the paths generation uses
// (chunked prefill, then one token per step).
#include "decisions.h"

#include <glmrt/base/error.h>
#include <glmrt/engine/engine.h>
#include <glmrt/generate/generator.h>
#include <glmrt/generate/session.h>
#include <glmrt/generate/speculator.h>
#include <glmrt/validate/oracle.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace glmrt {
namespace {

int32_t argmax(std::span<const float> v) {
  return static_cast<int32_t>(std::max_element(v.begin(), v.end()) - v.begin());
}

bool all_finite(std::span<const float> v) {
  return std::all_of(v.begin(), v.end(), [](float x) { return std::isfinite(x); });
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

/// Records the model's decisions into a trace for one scope.
class ScopedTrace {
 public:
  ScopedTrace(Model& model, ForwardTrace& trace) : model_(model) { model_.set_trace(&trace); }
  ~ScopedTrace() { model_.set_trace(nullptr); }
  ScopedTrace(const ScopedTrace&) = delete;
  ScopedTrace& operator=(const ScopedTrace&) = delete;

 private:
  Model& model_;
};

/// Forces an attention form for one scope, then restores the model's own.
class ScopedAttentionForm {
 public:
  ScopedAttentionForm(Model& model, AttentionFormChoice form)
      : model_(model), previous_(model.attention_form()) {
    model_.set_attention_form(form);
  }
  ~ScopedAttentionForm() { model_.set_attention_form(previous_); }
  ScopedAttentionForm(const ScopedAttentionForm&) = delete;
  ScopedAttentionForm& operator=(const ScopedAttentionForm&) = delete;

 private:
  Model& model_;
  AttentionFormChoice previous_;
};

void check_fits_model(const OracleCase& c, const Model& model) {
  const int32_t vocab = model.config().vocab_size;
  for (int32_t id : c.full_ids)
    if (id < 0 || id >= vocab)
      fail("case {}: token id {} is outside this model's vocabulary of {}", c.name, id, vocab);
  if (static_cast<int32_t>(c.logits.front().size()) != vocab)
    fail("case {}: reference logits have {} columns, the model's vocabulary is {}", c.name,
         c.logits.front().size(), vocab);
  if (model.has_mtp() && c.mtp_pred.empty())
    fail(
        "case {}: the model has an MTP layer but the reference has no `mtp_pred` / `mtp_margin` "
        "(one row per position but the last)",
        c.name);
}

/// Accumulates the teacher-forced comparison row by row, chunk by chunk.
class LogitComparison {
 public:
  LogitComparison(const OracleCase& c, const ValidateThresholds& th, CaseReport& r)
      : c_(c), th_(th), r_(r) {}

  void add(int64_t t, std::span<const float> ours) {
    ++r_.rows_checked;
    if (!all_finite(ours)) {
      ++r_.non_finite_rows;
      return;
    }
    for (size_t v = 0; v < ours.size(); ++v)
      r_.max_abs_dlogit = std::max(r_.max_abs_dlogit, std::fabs(ours[v] - c_.logits[t][v]));
    kl_sum_ += kl_divergence(c_.logits[t], ours);
    if (c_.margin[t] > th_.min_margin) {
      ++clear_rows_;
      agree_ += argmax(ours) == c_.tf_pred[t];
    }
  }

  void finish() {
    if (r_.non_finite_rows > 0) {
      // Nothing about those rows can be trusted: report them as infinitely off.
      r_.max_abs_dlogit = r_.mean_kl = std::numeric_limits<double>::infinity();
    } else {
      r_.mean_kl = r_.rows_checked ? kl_sum_ / static_cast<double>(r_.rows_checked) : 0.0;
    }
    r_.top1_agree = clear_rows_ ? static_cast<double>(agree_) / clear_rows_ : 1.0;
  }

 private:
  const OracleCase& c_;
  const ValidateThresholds& th_;
  CaseReport& r_;
  int64_t clear_rows_ = 0, agree_ = 0;
  double kl_sum_ = 0;
};

/// The MTP head teacher-forced, chunk by chunk: position t sees full_ids[t + 1]
/// and the main model's final-normed hidden state at t.
class MtpComparison {
 public:
  MtpComparison(Model& model, const OracleCase& c, const ValidateThresholds& th, KvCache& cache)
      : model_(model), c_(c), th_(th), cache_(cache) {}

  void add(int64_t first, std::span<const float> normed) {
    const int64_t D = model_.config().hidden_size, V = model_.config().vocab_size;
    const int64_t rows = std::min<int64_t>(static_cast<int64_t>(normed.size()) / D,
                                           static_cast<int64_t>(c_.mtp_pred.size()) - first);
    if (rows <= 0) return;
    const std::span<const int32_t> next(c_.full_ids.data() + first + 1, rows);
    const auto h = model_.mtp_forward(cache_, next, normed.first(rows * D));
    const auto logits = model_.mtp_logits(h, rows);
    for (int64_t i = 0; i < rows; ++i) {
      const std::span<const float> row(logits.data() + i * V, V);
      if (!all_finite(row)) ++non_finite_;
      if (c_.mtp_margin[first + i] <= th_.min_margin) continue;
      ++clear_;
      agree_ += argmax(row) == c_.mtp_pred[first + i];
    }
  }

  void finish(CaseReport& r) const {
    r.mtp_checked = true;
    r.mtp_top1_agree = clear_ ? static_cast<double>(agree_) / clear_ : 1.0;
    r.non_finite_rows += non_finite_;
  }

 private:
  Model& model_;
  const OracleCase& c_;
  const ValidateThresholds& th_;
  KvCache& cache_;
  int64_t clear_ = 0, agree_ = 0, non_finite_ = 0;
};

void teacher_forced(Engine& engine, const OracleCase& c, const ValidateThresholds& th,
                    int64_t chunk, CaseReport& r) {
  Model& model = engine.model();
  const int64_t D = model.config().hidden_size, V = model.config().vocab_size;
  KvCache cache = engine.new_cache();
  ForwardTrace trace;
  LogitComparison logits(c, th, r);
  std::optional<MtpComparison> mtp;
  if (model.has_mtp()) mtp.emplace(model, c, th, cache);
  {
    const ScopedTrace recording(model, trace);
    model.forward_chunked(cache, c.full_ids, chunk, [&](int64_t first, std::span<const float> h) {
      const int64_t n = static_cast<int64_t>(h.size()) / D;
      const auto normed = model.final_norm(h, n);
      const auto rows = model.head(normed, n);
      for (int64_t i = 0; i < n; ++i) logits.add(first + i, std::span(rows).subspan(i * V, V));
      if (mtp) mtp->add(first, normed);
    });
  }
  logits.finish();
  if (mtp) mtp->finish(r);
  compare_decisions(c, trace, model.config().num_hidden_layers, r);
}

/// The greedy continuation through the generation loop, as `run` decodes:
/// chunked prefill, then decode steps — with the profile's drafter, each step
/// verifies its drafts in one batch.
void greedy(Engine& engine, const OracleCase& c, int64_t chunk, CaseReport& r) {
  r.greedy_checked = true;
  r.greedy_total = static_cast<int64_t>(c.generated_ids.size());
  Session session(engine);
  session.set_prefill_chunk(chunk);
  SamplingParams params;
  params.temperature = 0.0;
  Sampler sampler(params);
  try {
    const Generation g =
        generate(session, sampler, c.prompt_ids, {static_cast<int>(r.greedy_total), {}});
    for (size_t i = 0; i < g.tokens.size() && i < c.generated_ids.size(); ++i)
      r.greedy_identical += g.tokens[i] == c.generated_ids[i];
  } catch (const NonFiniteLogits&) {
    ++r.non_finite_rows;
  }
  if (const Speculator* speculator = session.speculator()) {
    const DraftStats& s = speculator->stats();
    r.draft = DraftReport{s.drafter, s.proposed, s.accepted, s.forwards};
  } else {
    // Without a drafter every decode step is one forward of one token.
    r.draft = DraftReport{"", 0, 0, session.stats().decoded_tokens};
  }
}

CaseReport run_case(Engine& engine, const OracleCase& c, const ValidateThresholds& th,
                    const ValidateOptions& options) {
  Model& model = engine.model();
  check_fits_model(c, model);
  CaseReport r;
  r.name = c.name;
  r.rows_total = static_cast<int64_t>(c.full_ids.size());
  r.prefill_chunk = options.prefill_chunk;
  const Model::Counters before = model.counters();

  teacher_forced(engine, c, th, options.prefill_chunk, r);
  greedy(engine, c, options.prefill_chunk, r);

  r.forward_calls = model.counters().forward_calls - before.forward_calls;
  r.mtp_forward_calls = model.counters().mtp_forward_calls - before.mtp_forward_calls;
  r.pass = r.non_finite_rows == 0 && r.rows_checked == r.rows_total &&
           r.top1_agree >= th.min_top1 && r.max_abs_dlogit <= th.max_dlogit &&
           (!r.mtp_checked || r.mtp_top1_agree >= th.min_top1) && r.mean_kl <= th.max_kl &&
           (!th.greedy_identical || r.greedy_identical == r.greedy_total);
  return r;
}

}  // namespace

ValidationReport validate(Engine& engine, const std::vector<OracleCase>& cases,
                          const ValidateThresholds& thresholds, const ValidateOptions& options) {
  if (cases.empty()) fail("no reference cases to validate against");
  const ScopedAttentionForm form(engine.model(), options.attention_form);
  ValidationReport report;
  report.thresholds = thresholds;
  report.pass = true;
  for (const auto& c : cases) {
    report.cases.push_back(run_case(engine, c, thresholds, options));
    report.pass = report.pass && report.cases.back().pass;
  }
  return report;
}

}  // namespace glmrt
