#include <glmrt/base/byte_size.h>
#include <glmrt/base/error.h>
#include <glmrt/experts/expert_layout.h>
#include <glmrt/experts/widened_read.h>
#include <glmrt/memory/forward_buffers.h>
#include <glmrt/memory/memory_estimates.h>
#include <glmrt/memory/memory_plan.h>

#include <fmt/format.h>

#include <algorithm>

namespace glmrt {
namespace {

std::string budget_origin(const Profile& profile, const AvailableMemory& available,
                          uint64_t budget) {
  if (!profile.memory_budget_auto) return budget ? "memory.budget" : "no memory.budget: unlimited";
  std::string origin =
      fmt::format("auto: {:.0f}% of {} available now (MemAvailable {}", 100 * kAutoBudgetShare,
                  format_byte_size(available.usable()), format_byte_size(available.mem_available));
  if (available.cgroup_room)
    origin += fmt::format("; cgroup room {} from {}", format_byte_size(*available.cgroup_room),
                          available.cgroup_source);
  return origin + ")";
}

}  // namespace

RankShare rank_share_of(int rank, bool holds_model,
                        const std::vector<std::vector<ExpertLayout>>& layouts,
                        const std::function<bool(int layer, int32_t expert)>& runs_expert) {
  RankShare share{rank, holds_model, 0, 0};
  for (size_t layer = 0; layer < layouts.size(); ++layer) {
    int here = 0;
    for (size_t e = 0; e < layouts[layer].size(); ++e)
      if (runs_expert(static_cast<int>(layer), static_cast<int32_t>(e))) ++here;
    share.experts_per_layer = std::max(share.experts_per_layer, here);
    share.experts_owned += here;
  }
  return share;
}

uint64_t MemoryPlan::minimum() const {
  uint64_t sum = 0;
  for (const MemoryPart& p : parts)
    if (p.needed) sum += p.bytes;
  return sum;
}

uint64_t MemoryPlan::total() const {
  uint64_t sum = 0;
  for (const MemoryPart& p : parts) sum += p.bytes;
  return sum;
}

const MemoryPart* MemoryPlan::part(std::string_view name) const {
  for (const MemoryPart& p : parts)
    if (p.name == name) return &p;
  return nullptr;
}

std::string MemoryPlan::table() const {
  std::string text;
  for (const MemoryPart& p : parts)
    text += fmt::format("    {:<28} {:>12}  {}{}\n", p.name, format_byte_size(p.bytes), p.detail,
                        p.needed ? "" : " [sized from what is left]");
  text += fmt::format("    {:<28} {:>12}\n", "total", format_byte_size(total()));
  text +=
      fmt::format("    {:<28} {:>12}  (every part above not marked `sized from what is left`)\n",
                  "minimum", format_byte_size(minimum()));
  text += fmt::format("    {:<28} {:>12}  {}\n", "budget",
                      budget ? format_byte_size(budget) : std::string("unlimited"), budget_origin);
  return text;
}

MemoryPlan plan_memory(const Profile& profile, const RunSettings& settings,
                       const ModelConfig& config, const TensorDirectory& tensors,
                       const MemoryPlanInputs& inputs) {
  MemoryPlan plan;
  plan.budget = profile.memory_budget_auto
                    ? static_cast<uint64_t>(kAutoBudgetShare * double(inputs.available.usable()))
                    : profile.memory_budget_bytes;
  plan.budget_origin = budget_origin(profile, inputs.available, plan.budget);
  if (profile.memory_budget_auto && inputs.available.usable() == 0)
    fail(
        "{}: memory.budget is auto but the memory available could not be read (/proc/meminfo, "
        "cgroup limits): give a size",
        profile.file.string());

  const bool mtp = checkpoint_has_mtp(config, tensors);
  const int store_layers = config.num_hidden_layers + (mtp ? 1 : 0);
  std::vector<std::vector<ExpertLayout>> planned;
  if (!inputs.layouts) planned = plan_expert_layouts(config, tensors, store_layers);
  const auto& layouts = inputs.layouts ? *inputs.layouts : planned;
  for (const auto& layer : layouts)
    if (!layer.empty()) ++plan.moe_layers;
  const ExpertSize expert = largest_expert(layouts, profile.expert_bits);
  // One slot: what the expert store plans for this io plugin when the caller
  // knows it, else the expert as the kernels use it, page-aligned, with room
  // for reads widened to a 4 KiB alignment.
  plan.expert_bytes = inputs.slot_bytes
                          ? align_up(*inputs.slot_bytes, 4096)
                          : align_up(std::max(expert.in_memory, expert.read) + 4096, 4096);
  plan.expert_read_bytes = expert.read;

  using namespace memory_part;
  const std::optional<RankShare>& rank_share = inputs.rank_share;
  const bool holds_model = !rank_share || rank_share->holds_model;
  const int experts_here = rank_share ? rank_share->experts_per_layer : config.n_routed_experts;
  const std::string on_rank0 = "rank 0 holds it (this rank runs routed experts only)";
  plan.parts.push_back({std::string(overhead), inputs.process_overhead,
                        "resident memory of this process before loading (measured)"});
  plan.parts.push_back(
      {std::string(dense), holds_model ? resident_weight_bytes(profile, config, tensors) : 0,
       !holds_model                ? on_rank0
       : profile.dense_bits.stored ? "from the model files' headers, each weight as stored"
                                   : "from the safetensors headers at the profile's precision"});
  if (profile.kv_sequences < 0 || profile.kv_sequences > kMaxKvSequences)
    fail("sequences decoded at once (serve --parallel) must be in 1..{} (0 = auto), got {}",
         kMaxKvSequences, profile.kv_sequences);
  const uint64_t one_kv = holds_model ? kv_cache_bytes(profile, config) : 0;
  plan.kv_sequences = std::max(profile.kv_sequences, 1);  // auto is resolved below
  const auto kv_detail = [&] {
    return holds_model
               ? fmt::format(
                     "{} tokens x {} layers incl. MTP x {} sequence{} decoded at "
                     "once (serve --parallel{}); serve's {} conversation slots "
                     "(memory.kv_slots{}, at least --parallel) share it",
                     profile.max_context, config.num_hidden_layers + 1, plan.kv_sequences,
                     plan.kv_sequences == 1 ? "" : "s", profile.kv_sequences == 0 ? " auto" : "",
                     settings.kv_slots, profile.kv_slots ? "" : " auto")
               : on_rank0;
  };
  plan.parts.push_back({std::string(kv), one_kv * uint64_t(plan.kv_sequences), kv_detail()});
  const size_t kv_part = plan.parts.size() - 1;
  // The expert store's pools: each MoE layer has cache + prefetch slots of
  // one expert (at least one), reads land straight in them when the file is
  // in the kernels' layout (widened to the io alignment), else in one staging
  // buffer and are converted into the slot. A step streams through its pool.
  const int prefetch = settings.prefetch_slots;
  const uint64_t staging = expert.in_memory == expert.read ? 0 : align_up(expert.read, 4096);
  // A pool holds at least one slot: with no prefetch and no fixed cache, that one.
  const bool fixed_cache = !settings.expert_cache_auto && settings.expert_cache_per_layer > 0;
  const int io_per_layer = experts_here == 0 ? 0 : prefetch > 0 ? prefetch : fixed_cache ? 0 : 1;
  const uint64_t io_slots = uint64_t(plan.moe_layers) * uint64_t(io_per_layer);
  // Reads ahead of experts that need converting land in buffers of their own
  // (one per read-ahead slot of a layer) and are converted on arrival.
  const uint64_t ahead_staging = prefetch > 0 ? uint64_t(prefetch) * staging : 0;
  plan.parts.push_back(
      {std::string(io), io_slots * plan.expert_bytes + staging + ahead_staging,
       fmt::format(
           "memory.prefetch {} slots x {} MoE layers x {} per slot{}", io_per_layer,
           plan.moe_layers, format_byte_size(plan.expert_bytes),
           staging ? fmt::format(" + {} staging for conversion{}", format_byte_size(staging),
                                 ahead_staging ? fmt::format(" + {} x {} for reads ahead", prefetch,
                                                             format_byte_size(staging))
                                               : std::string())
                   : std::string())});
  plan.forward_threads = std::max(settings.threads, 1);
  const int drafts = profile.draft ? profile.max_draft_tokens : 0;
  const bool mtp_rows = profile.draft && mtp;
  // Positions of the largest forward call: a prefill chunk, or a decode step
  // verifying its drafts, and beside it a token with its drafts for each
  // other sequence decoded at once (a batch runs one prompt chunk a step).
  const auto shape_of = [&](int64_t chunk) {
    const int64_t others = int64_t(plan.kv_sequences - 1) * (1 + drafts);
    return ForwardShape{std::max<int64_t>(chunk, 1 + drafts) + others,
                        profile.max_context,
                        plan.forward_threads,
                        drafts,
                        mtp_rows,
                        plan.kv_sequences};
  };
  const uint64_t widest = uint64_t(std::max(config.hidden_size, config.moe_intermediate_size));
  const uint64_t conversion_rows = staging ? 4 * uint64_t(plan.forward_threads) * widest : 0;
  const auto call_bytes = [&](int64_t chunk) {
    const ForwardBufferBytes b = forward_buffer_bytes(config, shape_of(chunk));
    return b.moe_block + b.layers + b.logits;
  };
  plan.prefill_chunk = profile.prefill_chunk > 0
                           ? std::min<int64_t>(profile.prefill_chunk, profile.max_context)
                           : profile.max_context;
  if (profile.prefill_chunk == 0 && plan.budget != 0) {
    // Whole-prompt prefill when it fits: otherwise the largest chunk that
    // does, counted from a floor the minimum includes. With expert memory
    // sized from what is left, the chunk takes at most half of it.
    const int64_t floor = std::min<int64_t>(kSmallestAutoPrefillChunk, profile.max_context);
    const uint64_t fixed_now =
        plan.minimum() + call_bytes(floor) + conversion_rows +
        (settings.expert_cache_auto ? 0
                                    : uint64_t(std::max(settings.expert_cache_per_layer, 0)) *
                                          uint64_t(plan.moe_layers) * plan.expert_bytes) +
        profile.pinned_bytes.value_or(0);
    uint64_t room = plan.budget > fixed_now ? plan.budget - fixed_now : 0;
    if (settings.expert_cache_auto || !profile.pinned_bytes) room /= 2;
    const uint64_t at_floor = call_bytes(floor);
    int64_t lo = floor, hi = profile.max_context;  // the largest chunk whose growth fits room
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo + 1) / 2;
      if (call_bytes(mid) - at_floor <= room)
        lo = mid;
      else
        hi = mid - 1;
    }
    plan.prefill_chunk = lo;
    plan.prefill_chunk_from_budget = lo < profile.max_context;
  }
  // The forward call's parts, at the shape of the sequences counted so far
  // (again once `auto` has chosen how many).
  const size_t working_part = plan.parts.size(), activations_part = working_part + 1;
  plan.parts.resize(plan.parts.size() + 2);
  const auto forward_parts = [&] {
    const ForwardShape shape = shape_of(plan.prefill_chunk);
    const ForwardBufferBytes buffers = forward_buffer_bytes(config, shape);
    const std::string call =
        plan.prefill_chunk_from_budget
            ? fmt::format(
                  "{} positions (memory.prefill_chunk 0: the whole prompt does not fit the "
                  "budget, so prompts run in chunks of {})",
                  shape.positions, plan.prefill_chunk)
            : fmt::format("{} positions", shape.positions);
    const std::string sequences =
        plan.kv_sequences > 1 ? fmt::format(" with {} sequences at once", plan.kv_sequences) : "";
    plan.parts[working_part] = {
        std::string(working), buffers.moe_block + conversion_rows,
        fmt::format("the MoE block's buffers for {} positions{} (routes, each user's output "
                    "row, the experts' rows of one grouped call, the shared expert){}",
                    shape.positions, sequences,
                    staging ? " and the conversion's row scratch" : "")};
    // An expert rank holds one exchange's rows: the hidden states it is sent
    // and the weighted sums it sends back, in f32 whatever the wire.
    const uint64_t exchange_rows =
        2 * uint64_t(shape.positions) * uint64_t(config.hidden_size) * sizeof(float);
    plan.parts[activations_part] =
        holds_model
            ? MemoryPart{std::string(activations), buffers.layers + buffers.logits,
                         fmt::format("one forward call of {}{} against {} keys: hidden rows, "
                                     "attention (either MLA form), DSA selections{}; logits {}",
                                     call, sequences, profile.max_context,
                                     mtp_rows ? ", MTP pairs" : "",
                                     format_byte_size(buffers.logits))}
            : MemoryPart{std::string(activations), exchange_rows,
                         fmt::format("one exchange of {} positions: hidden rows in, weighted "
                                     "sums out (rank 0 runs the rest of the forward)",
                                     shape.positions)};
  };
  forward_parts();

  if (profile.kv_sequences == 0) {
    // Auto: one sequence, and more (up to kAutoKvSequences) while their
    // caches fit in half of what the budget leaves beyond the minimum (the
    // other half stays for expert memory); no budget, no limit.
    const uint64_t spare = plan.budget > plan.minimum() ? plan.budget - plan.minimum() : 0;
    const uint64_t more = plan.budget == 0 ? uint64_t(kAutoKvSequences - 1)
                          : one_kv == 0    ? 0
                                           : spare / 2 / one_kv;
    plan.kv_sequences = 1 + static_cast<int>(std::min<uint64_t>(more, kAutoKvSequences - 1));
    plan.parts[kv_part].bytes = one_kv * uint64_t(plan.kv_sequences);
    plan.parts[kv_part].detail = kv_detail();
    forward_parts();
  }

  // Expert memory: fixed sizes are needed; `auto` ones share what is left.
  plan.cache_auto = settings.expert_cache_auto;
  plan.pinned_auto = !profile.pinned_bytes.has_value();
  const uint64_t one_slot_everywhere = uint64_t(plan.moe_layers) * plan.expert_bytes;
  uint64_t lru = 0, pinned = profile.pinned_bytes.value_or(0);
  // No rank keeps more of a layer than its shard holds.
  const auto capped_cache = [&](int per_layer) { return std::min(per_layer, experts_here); };
  if (!plan.cache_auto) {
    plan.cache_per_layer = capped_cache(settings.expert_cache_per_layer);
    lru = uint64_t(plan.cache_per_layer) * one_slot_everywhere;
  }
  const uint64_t fixed =
      plan.minimum() + (plan.cache_auto ? 0 : lru) + (plan.pinned_auto ? 0 : pinned);
  const uint64_t left = plan.budget > fixed ? plan.budget - fixed : 0;
  const double share = kAutoPinnedShare;
  if (plan.cache_auto && plan.budget == 0) {
    plan.cache_per_layer = capped_cache(settings.expert_cache_per_layer);  // no budget to size from
    lru = uint64_t(plan.cache_per_layer) * one_slot_everywhere;
  }
  if (plan.pinned_auto) {
    if (plan.budget == 0) {
      // No budget means no limit beyond the machine, but pinning all of it
      // would make every start read gigabytes: as much again as the LRU,
      // within what `memory.budget: auto` would leave.
      const auto machine =
          static_cast<uint64_t>(kAutoBudgetShare * double(inputs.available.usable()));
      const uint64_t room = machine > fixed + lru ? machine - fixed - lru : 0;
      pinned = std::min(room, lru);
    } else if (plan.cache_auto)
      pinned = static_cast<uint64_t>(double(left) * share);
    else
      pinned = std::min(left, static_cast<uint64_t>(double(lru) * share / (1 - share)));
  }
  if (plan.pinned_auto && inputs.pinnable_experts)  // nothing to pin beyond the history
    pinned = std::min(pinned, *inputs.pinnable_experts * plan.expert_bytes);
  if (rank_share)  // nor beyond the shard
    pinned = std::min(pinned, uint64_t(rank_share->experts_owned) * plan.expert_bytes);
  if (plan.cache_auto && plan.budget != 0) {
    // What the history cannot fill goes to the LRU.
    const uint64_t for_lru = left > pinned ? left - pinned : 0;
    plan.cache_per_layer =
        one_slot_everywhere
            ? static_cast<int>(std::min<uint64_t>(for_lru / one_slot_everywhere,
                                                  uint64_t(std::max(experts_here, 0))))
            : 0;
    lru = uint64_t(plan.cache_per_layer) * one_slot_everywhere;
  }
  plan.pinned_bytes = pinned;
  plan.parts.push_back(
      {std::string(memory_part::pinned), pinned,
       fmt::format(
           "memory.pinned {}: up to {} experts of {}",
           plan.pinned_auto ? fmt::format("auto ({:.0f}% of the expert memory)", 100 * share)
                            : format_byte_size(pinned),
           plan.expert_bytes ? pinned / plan.expert_bytes : 0, format_byte_size(plan.expert_bytes)),
       !plan.pinned_auto});
  plan.parts.push_back(
      {std::string(memory_part::lru), lru,
       fmt::format("memory.expert_cache {}: {} experts x {} MoE layers{}",
                   plan.cache_auto ? "auto" : "fixed", plan.cache_per_layer, plan.moe_layers,
                   rank_share
                       ? fmt::format(" (rank {} runs at most {} experts of a layer, {} in all)",
                                     rank_share->rank, rank_share->experts_per_layer,
                                     rank_share->experts_owned)
                       : std::string()),
       !plan.cache_auto});

  if (plan.budget && plan.minimum() > plan.budget)
    fail(
        "{}: memory budget {} is below the minimum this model needs under this profile: {} "
        "needed, {} given ({} short). Nothing was loaded. Where it goes:\n{}"
        "Raise memory.budget, or lower max_context, prefill_chunk, serve --parallel, the "
        "precision or fixed expert_cache/pinned sizes.",
        profile.file.empty() ? std::string("the profile") : profile.file.string(),
        format_byte_size(plan.budget), format_byte_size(plan.minimum()),
        format_byte_size(plan.budget), format_byte_size(plan.minimum() - plan.budget),
        plan.table());
  return plan;
}

}  // namespace glmrt
