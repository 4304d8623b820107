#include "session_draft_host.h"

#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/draft/rejection_sampling.h>
#include <glmrt/generate/session.h>
#include <glmrt/generate/speculator.h>

#include <algorithm>
#include <chrono>
#include <optional>

namespace glmrt {
namespace {

// The drafters' uniforms come from their own generator, seeded from the
// sampling seed: drafting then never shifts the sampler's own draws.
constexpr uint64_t kDraftSeedSalt = 0x9E3779B97F4A7C15ull;

}  // namespace

Speculator::Speculator(Session& session, const DraftSetup& setup)
    : session_(session),
      drafter_(*setup.drafter),
      policy_(setup.policy),
      host_(std::make_unique<SessionDraftHost>(session,
                                               (setup.requirements & GLMRT_DRAFT_NEEDS_MTP) != 0)),
      shadow_(setup.policy.adaptive && setup.policy.min_tokens == 1 &&
              (setup.requirements & GLMRT_DRAFT_NEEDS_MTP) == 0),
      cost_(setup.policy, session.engine().model().experts_per_position(),
            (setup.requirements & GLMRT_DRAFT_NEEDS_MTP) != 0
                ? session.engine().model().config().num_experts_per_tok
                : 0),
      proposal_(session.engine().model().config().vocab_size, setup.policy.max_tokens) {
  stats_.drafter = setup.name;
  stats_.adaptive = policy_.adaptive;
  stats_.judged_at.assign(policy_.max_tokens, 0);
  stats_.accepted_at.assign(policy_.max_tokens, 0);
}

Speculator::~Speculator() = default;

void Speculator::history_truncated(int64_t length) {
  stable_ = std::min(stable_, static_cast<size_t>(std::max<int64_t>(length, 0)));
}

void Speculator::sync_history(int32_t token) {
  const std::vector<int32_t>& tokens = session_.tokens();
  size_t common = std::min(stable_, history_.size());
  while (common < history_.size() && common < tokens.size() && history_[common] == tokens[common])
    ++common;
  if (common == tokens.size() && common < history_.size() && history_[common] == token) ++common;
  if (common < history_.size()) {
    drafter_.rewind(static_cast<int64_t>(common));
    history_.resize(common);
  }
  if (history_.size() <= tokens.size()) {
    history_.insert(history_.end(), tokens.begin() + history_.size(), tokens.end());
    history_.push_back(token);
  }
  stable_ = tokens.size();
}

int Speculator::draft(int32_t token, const Sampler& sampler, int wanted, int64_t n_answer) {
  ExpertStore& experts = session_.engine().experts();
  const uint64_t misses_before = experts.stats().misses;
  const auto t0 = std::chrono::steady_clock::now();
  if (!draft_rng_seeded_) {
    draft_rng_.seed(sampler.params().seed ^ kDraftSeedSalt);
    draft_rng_seeded_ = true;
  }
  const glmrt_draft_request request =
      proposal_.request(history_, wanted, sampler.params(), draft_rng_, n_answer);
  host_->begin(token, wanted);
  const glmrt_status status = drafter_.propose(*host_, &request, proposal_.proposal());
  if (status != GLMRT_OK) {
    session_.discard_mtp_drafts();
    if (host_->error()) std::rethrow_exception(host_->error());
    const char* message = drafter_.last_error();
    fail("draft plugin `{}` failed to propose (status {}): {}", stats_.drafter, status,
         message && *message ? message : "no message");
  }
  int n = 0;
  try {
    n = proposal_.check(stats_.drafter);
  } catch (...) {
    session_.discard_mtp_drafts();
    throw;
  }
  const double seconds = seconds_since(t0);
  session_.add_decode_seconds(seconds);
  cost_.record_drafting({wanted, n, seconds});
  stats_.requested += wanted;
  stats_.drafting_seconds += seconds;
  stats_.drafter_reads += static_cast<int64_t>(experts.stats().misses - misses_before);
  if (n > 0 && n < policy_.min_tokens) {
    ++stats_.too_short;
    return 0;
  }
  return n;
}

int Speculator::draft_cap(int limit) const {
  const int64_t room =
      session_.engine().profile().max_context - static_cast<int64_t>(session_.tokens().size());
  return static_cast<int>(std::max<int64_t>(0, std::min<int64_t>(limit, room - 1)));
}

BatchDraftCandidate Speculator::candidate(int limit) const {
  BatchDraftCandidate c;
  const DraftCostEstimate e = cost_.estimate();
  c.acceptance = e.acceptance;
  c.drafting_per_draft = e.drafting_per_draft;
  c.min_tokens = policy_.min_tokens;
  c.adaptive = policy_.adaptive;
  const int room = draft_cap(limit);
  c.cap = policy_.adaptive ? cost_.explorable(room) : std::min(room, policy_.max_tokens);
  if (c.cap < policy_.min_tokens) c.cap = 0;
  return c;
}

std::span<const int32_t> Speculator::propose(int32_t token, const Sampler& sampler,
                                             std::span<const int32_t> generated, int limit,
                                             int wanted) {
  if (wanted > 0 && wanted > candidate(limit).cap)
    fail("speculative step: {} drafts asked for, at most {} may be verified now", wanted,
         candidate(limit).cap);
  std::span<const int32_t> rows = propose_rows(token, sampler, generated, limit, wanted);
  cost_.planned(wanted);
  return rows;
}

std::span<const int32_t> Speculator::propose_rows(int32_t token, const Sampler& sampler,
                                                  std::span<const int32_t> generated, int limit,
                                                  int wanted) {
  if (limit < 1) fail("speculative step: limit must be >= 1, got {}", limit);
  const int cap = draft_cap(limit);
  if (wanted < 0 || wanted > cap)
    fail("speculative step: {} drafts asked for, at most {} fit", wanted, cap);
  pending_.reset();
  sync_history(token);
  proposal_.clear();
  Pending p;
  p.before = static_cast<int64_t>(session_.tokens().size());
  const int64_t n_answer = static_cast<int64_t>(generated.size());
  p.drafts = wanted > 0 ? draft(token, sampler, wanted, n_answer) : 0;
  // While the cost model drafts nothing, a drafter that does not run the MTP
  // layer (cheap: it reads no expert) still proposes one draft, unverified,
  // judged against the row this step computes anyway.
  if (shadow_ && wanted == 0 && cap > 0 && draft(token, sampler, 1, n_answer) > 0)
    p.shadow = proposal_.distribution(0);
  // Draft k needs no row of its own when it would be the last token the
  // caller may take.
  p.next_needed = p.drafts < limit;
  p.rows.push_back(token);
  const std::span<const int32_t> drafts = proposal_.tokens().first(p.drafts);
  p.rows.insert(p.rows.end(), drafts.begin(), drafts.end() - (p.next_needed ? 0 : 1));
  pending_ = std::move(p);
  return pending_->rows;
}

void Speculator::abandon() {
  if (!pending_) return;
  pending_.reset();
  session_.discard_mtp_drafts();
}

SpeculativeStep Speculator::step(int32_t token, Sampler& sampler, std::span<const int32_t> context,
                                 std::span<const int32_t> generated, int limit) {
  if (limit < 1) fail("speculative step: limit must be >= 1, got {}", limit);
  ExpertStore& experts = session_.engine().experts();
  const int cap = draft_cap(limit);
  const std::span<const int32_t> rows =
      propose_rows(token, sampler, generated, limit, cap > 0 ? cost_.choose(cap) : 0);
  // Verify: the token and its drafts in one forward.
  const ExpertStoreStats experts_before = experts.stats();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<float> logits;
  try {
    logits = session_.extend(rows);
  } catch (...) {
    abandon();
    throw;
  }
  VerifyMeasurement measured;
  measured.seconds = seconds_since(t0);
  measured.experts = static_cast<int64_t>((experts.stats().hits - experts_before.hits) +
                                          (experts.stats().misses - experts_before.misses));
  measured.misses = static_cast<int64_t>(experts.stats().misses - experts_before.misses);
  // What the reads cost this step on the clock: the time it waited for them,
  // not the sum of their latencies, which counts reads that ran in parallel or
  // ahead of the step in full, makes every read look several times dearer
  // than it is, and so would have the cost model drafting nothing under
  // streaming.
  measured.read_seconds = experts.stats().wait_seconds - experts_before.wait_seconds;
  return judge(logits, sampler, context, generated, &measured);
}

SpeculativeStep Speculator::verify(std::span<const float> logits, Sampler& sampler,
                                   std::span<const int32_t> context,
                                   std::span<const int32_t> generated) {
  return judge(logits, sampler, context, generated, nullptr);
}

SpeculativeStep Speculator::judge(std::span<const float> logits, Sampler& sampler,
                                  std::span<const int32_t> context,
                                  std::span<const int32_t> generated,
                                  const VerifyMeasurement* measured) {
  if (!pending_) fail("speculative step: verify() without a proposed step");
  const Pending p = std::move(*pending_);
  pending_.reset();
  Model& model = session_.engine().model();
  const int64_t V = model.config().vocab_size;
  const int k = p.drafts;
  if (static_cast<int64_t>(logits.size()) != static_cast<int64_t>(p.rows.size()) * V)
    fail("speculative step: {} logits for {} rows of {} tokens", logits.size(), p.rows.size(), V);
  SpeculativeStep result;
  int accepted = 0;
  try {
    std::vector<int32_t> seen(context.begin(), context.end());
    std::vector<int32_t> answer(generated.begin(), generated.end());
    const auto uniform = [&sampler] { return sampler.uniform(); };
    for (; accepted < k; ++accepted) {
      const std::span<const float> row(logits.data() + accepted * V, V);
      const auto dist = sampler.distribution(row, seen, answer);
      const DraftVerdict verdict = verify_draft(dist, proposal_.distribution(accepted), uniform);
      if (!verdict.accepted) {
        result.next = verdict.token;
        break;
      }
      result.accepted.push_back(verdict.token);
      seen.push_back(verdict.token);
      answer.push_back(verdict.token);
    }
    if (accepted == k && p.next_needed)
      result.next = sampler.sample(logits.subspan(static_cast<size_t>(k * V), V), seen, answer);
    if (p.shadow) {
      // min(1, p(d)/q(d)): the probability verification would have accepted
      // it, an unbiased estimate of draft 1's acceptance rate.
      const auto dist = sampler.distribution(logits.first(V), seen, answer);
      double p_d = 0.0;
      for (const TokenProbability& e : dist)
        if (e.token == p.shadow->token) p_d = e.probability;
      cost_.record_shadow(std::min(1.0, p_d / p.shadow->at(p.shadow->token)));
      drafter_.accepted(0, 1);
      ++stats_.shadow_drafts;
    }
  } catch (...) {
    session_.rollback_to(p.before);  // e.g. non-finite logits: the step did not happen
    throw;
  }
  session_.rollback_to(p.before + 1 + accepted);
  if (k > 0) drafter_.accepted(accepted, k);

  if (measured) {
    VerifyMeasurement m = *measured;
    m.drafts = k;
    m.accepted = accepted;
    cost_.record_verification(m);
    if (k > 0 && m.experts > 0) {
      const int64_t extra = std::max<int64_t>(0, m.experts - model.experts_per_position());
      stats_.verify_extra_experts += extra;
      stats_.verify_extra_reads += double(extra) * double(m.misses) / double(m.experts);
    }
  } else {
    cost_.record_acceptance(k, accepted);
  }
  ++stats_.forwards;
  stats_.decided += accepted + (result.next >= 0 ? 1 : 0);
  stats_.proposed += k;
  stats_.accepted += accepted;
  for (int j = 0; j < k && j <= accepted; ++j) {
    ++stats_.judged_at[j];
    stats_.accepted_at[j] += j < accepted;
  }
  stats_.chosen = cost_.chosen();
  stats_.probes = cost_.probes();
  stats_.estimate = cost_.estimate();
  return result;
}

}  // namespace glmrt
