// What the expert store counted: where each lookup was served (pinned set,
// slot, read), what was read and how long steps waited, and how well reading
// ahead guessed. The pools, the steps and the read-ahead add to one of these.
#pragma once

#include <algorithm>
#include <cstdint>

namespace glmrt {

struct ExpertStoreStats {
  uint64_t pinned_hits = 0;                    // experts a step found in the pinned set
  uint64_t hits = 0;                           // experts a step found in a slot (or on their way)
  uint64_t misses = 0;                         // experts a step had to read
  uint64_t bytes_read = 0, extents_read = 0;   // of successful reads, as widened
  double read_seconds = 0;                     // sum over reads of submission to completion
  double wait_seconds = 0;                     // time steps spent waiting for reads
  double busy_seconds = 0;                     // wall time with at least one read in flight
  double convert_seconds = 0;                  // checking and converting experts into slots
  uint64_t predicted = 0, predicted_used = 0;  // prefetch predictions and how many a step used
  uint64_t prefetch_reads = 0, prefetch_reads_used = 0;  // reads ahead, and those a step used
  uint64_t prefetch_bytes = 0;                           // bytes of the reads ahead (as widened)
  uint64_t prefetch_bytes_wasted = 0;  // of those, reads a slot dropped before any step used them
  uint64_t prefetch_reads_late = 0;    // reads ahead a step used that had not landed when it began
  uint64_t displaced_rereads = 0;      // misses on experts a read ahead had evicted
  uint64_t urgent_reads = 0;           // misses read ahead of queued guesses (io ABI 1.6)
  uint64_t cancelled_reads = 0;        // reads ahead given up before they reached the drive
  uint64_t cancelled_bytes = 0;        // the bytes those did not read (as widened)
  uint64_t ahead_finished = 0;         // reads ahead checked into their slot on arrival
  double ahead_finish_seconds = 0;     // the time those checks took
  uint64_t first_guesses = 0, first_guesses_used = 0;  // guesses a refined prediction replaced
  uint64_t next_step_predicted = 0;       // the next step's first MoE layer, predicted before
  uint64_t next_step_predicted_used = 0;  // the step began (apart from `predicted`), and used
  uint64_t step_gaps = 0;                 // steps whose gap to the next step's first read closed
  double idle_between_steps_seconds = 0;  // the drive's idle time in those gaps
  uint64_t streamed_steps = 0;            // steps that needed more experts than the pool holds
  uint64_t slots_allocated = 0;
  // Slot memory a read had to fault in (the kernel zeroing it inside the
  // read): slots mapped on a step's path because the warmer had none ready.
  uint64_t fresh_slot_bytes = 0;
  uint64_t warmed_slot_bytes = 0;  // slot memory faulted in ahead, off the steps' path (a level)

  /// Pinned and slot hits over every lookup.
  double hit_rate() const {
    const uint64_t all = pinned_hits + hits + misses;
    return all ? double(pinned_hits + hits) / double(all) : 0.0;
  }
  /// Of the experts predicted for a step, the fraction the step used.
  double prediction_accuracy() const {
    return predicted ? double(predicted_used) / double(predicted) : 0.0;
  }
  /// Of the first guesses (made while the layer before ran), the fraction used.
  double first_guess_accuracy() const {
    return first_guesses ? double(first_guesses_used) / double(first_guesses) : 0.0;
  }
  /// Of the next step's first-layer experts predicted early, the fraction used.
  double next_step_accuracy() const {
    return next_step_predicted ? double(next_step_predicted_used) / double(next_step_predicted)
                               : 0.0;
  }
  /// Of the time reads were in flight, the fraction steps did not wait for.
  double overlap() const {
    return busy_seconds > 0 ? std::max(0.0, 1.0 - wait_seconds / busy_seconds) : 0.0;
  }
  /// Lookups of every kind (pinned, slot, read): 0 means no figure of them applies.
  uint64_t lookups() const { return pinned_hits + hits + misses; }
};

/// The work counted between two snapshots of a store's stats (one chat
/// answer's): every counter is `now` minus `before`; slots_allocated is a
/// level, not work, and stays as `now` has it.
ExpertStoreStats expert_stats_since(const ExpertStoreStats& now, const ExpertStoreStats& before);

}  // namespace glmrt
