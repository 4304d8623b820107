#include <glmrt/draft/draft_stats.h>

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>

namespace glmrt {
namespace {

std::vector<int64_t> minus(const std::vector<int64_t>& a, const std::vector<int64_t>& b) {
  std::vector<int64_t> d = a;
  for (size_t i = 0; i < d.size() && i < b.size(); ++i) d[i] -= b[i];
  return d;
}

// "(37.5%)", or what the rate would be of when there is nothing to rate: a
// share of nothing is no figure, never 0%.
std::string share_of(int64_t part, int64_t whole, std::string_view of_nothing) {
  if (whole <= 0) return fmt::format("({})", of_nothing);
  return fmt::format("({:.1f}%)", 100.0 * double(part) / double(whole));
}

}  // namespace

DraftStats draft_stats_since(const DraftStats& now, const DraftStats& before) {
  DraftStats d = now;
  d.forwards -= before.forwards;
  d.decided -= before.decided;
  d.requested -= before.requested;
  d.proposed -= before.proposed;
  d.accepted -= before.accepted;
  d.too_short -= before.too_short;
  d.judged_at = minus(now.judged_at, before.judged_at);
  d.accepted_at = minus(now.accepted_at, before.accepted_at);
  d.drafting_seconds -= before.drafting_seconds;
  d.verify_extra_experts -= before.verify_extra_experts;
  d.verify_extra_reads -= before.verify_extra_reads;
  d.drafter_reads -= before.drafter_reads;
  d.chosen = minus(now.chosen, before.chosen);
  d.probes -= before.probes;
  d.shadow_drafts -= before.shadow_drafts;
  return d;
}

std::vector<std::string> describe_draft_stats(const DraftStats& s) {
  std::vector<std::string> lines;
  lines.push_back(fmt::format(
      "draft: {}: {} forwards decided {} tokens ({:.2f} tokens per forward); {} drafts asked, {} "
      "proposed, {} accepted {}{}; drafting took {:.3f} s",
      s.drafter, s.forwards, s.decided, s.tokens_per_forward(), s.requested, s.proposed, s.accepted,
      share_of(s.accepted, s.proposed, "none proposed"),
      s.too_short ? fmt::format(", {} proposals under draft_min_tokens dropped", s.too_short) : "",
      s.drafting_seconds));
  std::string by_position = "draft acceptance by position:";
  for (size_t j = 0; j < s.judged_at.size(); ++j)
    by_position += fmt::format(" {}: {}/{} {}", j + 1, s.accepted_at[j], s.judged_at[j],
                               share_of(s.accepted_at[j], s.judged_at[j], "none judged"));
  lines.push_back(by_position);
  std::string chosen;
  for (size_t k = 0; k < s.chosen.size(); ++k)
    if (s.chosen[k]) chosen += fmt::format("{}{}: {}", chosen.empty() ? "" : ", ", k, s.chosen[k]);
  const DraftCostEstimate& e = s.estimate;
  int best = 0;
  for (int k = 1; k < static_cast<int>(s.chosen.size()); ++k)
    if (e.tokens_per_second(k) > e.tokens_per_second(best)) best = k;
  lines.push_back(fmt::format(
      "draft cost model: {}; steps by drafts chosen {{{}}} ({} probes, {} drafts judged "
      "unverified); extra expert reads by "
      "drafting: ~{:.1f} "
      "in verification ({} extra distinct experts), {} by the drafter; estimates: miss rate "
      "{:.1f}%, {:.2f} extra experts and {:.2f} ms compute per draft, {:.2f} ms per expert read, "
      "best now {} drafts at {:.2f} tokens per forward",
      s.adaptive ? "adaptive" : "fixed length", chosen, s.probes, s.shadow_drafts,
      s.verify_extra_reads, s.verify_extra_experts, s.drafter_reads, 100.0 * e.miss_rate,
      e.experts_per_draft, 1e3 * e.compute_per_draft, 1e3 * e.read_seconds_per_miss, best,
      e.tokens(best)));
  return lines;
}

}  // namespace glmrt
