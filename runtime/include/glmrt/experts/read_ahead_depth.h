// How deep each MoE layer reads ahead: which ranks of the next step's
// predicted experts are worth a read before the step asks for them.
// `memory.prefetch: N` reads the first N ranks everywhere; `auto` decides
// per layer and rank from what was measured: the rank's accuracy (of its
// guesses that were not in memory, so would be read), the drive's time for
// one expert read, the share of right guesses that landed before their
// step began (a late one saves only part of a read), the re-reads a wrong
// guess causes by taking a slot (misses on experts a guess evicted), the
// time checking a read ahead into its slot on arrival takes (one that needs
// converting is converted only when a step uses it, so a wrong one costs no
// conversion), and the share
// of the time the model computes that the drive is busy (time a step waits
// on a read is left out: the drive is busy then by definition, but a read
// ahead is issued while a step computes, so that wait says nothing about the
// drive it meets). A read ahead lands on an idle drive (the
// step computes) or a busy one (other reads are in flight): on an idle one a
// right guess saves the step that read and a wrong one costs nothing but its
// bytes; on a busy one a right guess saves nothing (the read was coming
// anyway) and a wrong one delays the needed reads queued behind it by a
// read. So a rank is read ahead while
//   p x read x (1 - busy) x on-time  >  (1 - p) x (read x (busy + displaced) + finish),
// i.e. with nothing else to pay, while its guesses are right more often than
// the drive is busy: reading ahead stops where it would only queue up. Accuracy
// is measured whether or not anything is read, so a layer at depth 0 starts
// reading when its predictions become good.
#pragma once

#include <glmrt/experts/expert_store_stats.h>

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace glmrt {

/// A read ahead's measured costs, in seconds per expert.
struct ReadAheadCosts {
  double read_seconds = 0;    // the drive's time for one expert: bytes / its throughput while busy
  double finish_seconds = 0;  // checking one read ahead into its slot when it lands
  double on_time = 1;         // of the reads ahead a step used, the share landed when it began
  double displaced = 0;       // re-reads of evicted experts per read ahead (charged to wrong ones)
  double drive_busy = 0.5;    // share of the compute time with reads in flight (0.5: not measured)
};

/// The share of the time the model computed (`wall` less the `waited` on
/// reads) that reads were in flight (`busy` of `wall`, which includes the
/// waits), 0 to 1; -1 when the model did nothing but wait.
double busy_while_computing(double busy, double waited, double wall);

/// The costs as `stats` measured them, with the drive reading
/// `drive_bytes_per_second` while busy (0: not measured yet; neutral
/// figures where nothing was measured).
ReadAheadCosts read_ahead_costs(const ExpertStoreStats& stats, double drive_bytes_per_second);

class ReadAheadDepth {
 public:
  /// `layers` store rows; at most `max_depth` ranks (the prefetch slots);
  /// `automatic` decides per rank, else every rank below max_depth is read.
  ReadAheadDepth(size_t layers, int max_depth, bool automatic);

  bool automatic() const { return automatic_; }
  int max_depth() const { return max_depth_; }

  /// Whether rank `rank` of `layer`'s prediction is read ahead, given `costs`
  /// (ranks past max_depth are judged as the last one). Call chose() once
  /// per prediction first.
  bool reads(size_t layer, size_t rank) const;
  /// Decides every rank of `layer` for its next prediction, and records the depth.
  void choose(size_t layer, const ReadAheadCosts& costs);
  /// The step used (or not) the expert predicted at `rank`, which was not in
  /// memory (`absent`) when predicted.
  void observe(size_t layer, size_t rank, bool absent, bool used);

  /// Per layer that predicted: the mean depth chosen (ranks read ahead).
  struct LayerDepth {
    size_t layer = 0;
    double mean_depth = 0;
  };
  std::vector<LayerDepth> chosen() const;

 private:
  size_t clamp_rank(size_t rank) const;
  struct RankRecord {
    double absent = 0, used = 0;  // decayed counts of absent guesses, and of those used
  };

  int max_depth_;
  bool automatic_;
  std::vector<RankRecord> ranks_;    // layer-major, max_depth per layer
  std::vector<uint8_t> reads_;       // layer-major: the current decision
  std::vector<uint64_t> decisions_;  // by layer
  std::vector<uint64_t> depth_sum_;  // by layer
};

}  // namespace glmrt
