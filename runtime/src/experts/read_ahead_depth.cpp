#include <glmrt/experts/read_ahead_depth.h>

#include <algorithm>

namespace glmrt {
namespace {

// Each new outcome weighs as much as the last ~50 together: a layer's
// accuracy follows the text being written, and a rank at depth 0 comes back
// within a few dozen steps once its guesses are right.
constexpr double kKeep = 0.98;

}  // namespace

double busy_while_computing(double busy, double waited, double wall) {
  const double computing = wall - waited;
  if (!(computing > 0)) return -1;
  return std::clamp((busy - waited) / computing, 0.0, 1.0);
}

ReadAheadCosts read_ahead_costs(const ExpertStoreStats& s, double drive_bytes_per_second) {
  ReadAheadCosts c;
  const uint64_t reads = s.misses + s.prefetch_reads;
  if (drive_bytes_per_second > 0 && s.bytes_read > 0 && reads > 0)
    c.read_seconds =
        static_cast<double>(s.bytes_read) / static_cast<double>(reads) / drive_bytes_per_second;
  if (s.ahead_finished > 0)
    c.finish_seconds = s.ahead_finish_seconds / static_cast<double>(s.ahead_finished);
  if (s.prefetch_reads_used > 0)
    c.on_time = 1.0 - static_cast<double>(s.prefetch_reads_late) /
                          static_cast<double>(s.prefetch_reads_used);
  // Re-reads per guess read, right or wrong: any guess takes a slot, and the
  // counter cannot tell whose eviction a re-read came from. A right guess's
  // eviction is a wash (its step's miss would have taken a slot too), so
  // charging this to the wrong ones alone, at their rate, is what they cost.
  // (Per wasted guess it grew without bound once the guesses read were all
  // right, and kept a layer at depth 0: re-reads stay, wasted guesses stop.)
  if (s.prefetch_reads > 0)
    c.displaced = static_cast<double>(s.displaced_rereads) / static_cast<double>(s.prefetch_reads);
  return c;
}

ReadAheadDepth::ReadAheadDepth(size_t layers, int max_depth, bool automatic)
    : max_depth_(std::max(max_depth, 0)),
      automatic_(automatic),
      ranks_(layers * static_cast<size_t>(max_depth_)),
      reads_(layers * static_cast<size_t>(max_depth_), automatic ? 0 : 1),
      decisions_(layers, 0),
      depth_sum_(layers, 0) {}

size_t ReadAheadDepth::clamp_rank(size_t rank) const {
  return std::min(rank, static_cast<size_t>(max_depth_ - 1));
}

bool ReadAheadDepth::reads(size_t layer, size_t rank) const {
  if (max_depth_ == 0 || layer >= decisions_.size()) return false;
  if (!automatic_ && rank >= static_cast<size_t>(max_depth_)) return false;
  return reads_[layer * static_cast<size_t>(max_depth_) + clamp_rank(rank)] != 0;
}

void ReadAheadDepth::choose(size_t layer, const ReadAheadCosts& costs) {
  if (max_depth_ == 0 || layer >= decisions_.size()) return;
  const size_t first = layer * static_cast<size_t>(max_depth_);
  if (automatic_) {
    // Nothing read yet: a read as the unit of time.
    const double read = costs.read_seconds > 0 ? costs.read_seconds : 1.0;
    const double finish = costs.read_seconds > 0 ? costs.finish_seconds : 0.0;
    const double busy = std::clamp(costs.drive_busy, 0.0, 1.0);
    // A right guess that has not landed when its step begins saves about half.
    const double saved = read * (1.0 - busy) * (costs.on_time + 0.5 * (1.0 - costs.on_time));
    const double wasted = read * (busy + costs.displaced) + finish;
    for (size_t r = 0; r < static_cast<size_t>(max_depth_); ++r) {
      const RankRecord& record = ranks_[first + r];
      // Laplace's rule: an unmeasured rank is as likely right as wrong.
      const double p = (record.used + 1.0) / (record.absent + 2.0);
      reads_[first + r] = p * saved > (1.0 - p) * wasted ? 1 : 0;
    }
  }
  ++decisions_[layer];
  for (size_t r = 0; r < static_cast<size_t>(max_depth_); ++r)
    depth_sum_[layer] += reads_[first + r];
}

void ReadAheadDepth::observe(size_t layer, size_t rank, bool absent, bool used) {
  if (max_depth_ == 0 || layer >= decisions_.size() || !absent) return;
  RankRecord& record = ranks_[layer * static_cast<size_t>(max_depth_) + clamp_rank(rank)];
  record.absent = record.absent * kKeep + 1.0;
  record.used = record.used * kKeep + (used ? 1.0 : 0.0);
}

std::vector<ReadAheadDepth::LayerDepth> ReadAheadDepth::chosen() const {
  std::vector<LayerDepth> out;
  for (size_t layer = 0; layer < decisions_.size(); ++layer)
    if (decisions_[layer] > 0)
      out.push_back(
          {layer, static_cast<double>(depth_sum_[layer]) / static_cast<double>(decisions_[layer])});
  return out;
}

}  // namespace glmrt
