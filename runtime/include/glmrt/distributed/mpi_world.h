// The one place glmrt talks MPI: the ranks mpirun started, and messages of
// bytes between them, sent and received without blocking so that a rank
// that stops answering is noticed at a deadline instead of waited on forever.
// Built without MPI (GLMRT_MPI=OFF), start() refuses with a message saying so.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace glmrt {

/// Whether mpirun started this process as one of more than one rank, from
/// the launcher's environment (OMPI_COMM_WORLD_SIZE, PMI_SIZE): nothing of
/// MPI is touched, so a plain run pays nothing.
bool launched_as_several_ranks();

using Bytes = std::vector<std::byte>;
using Clock = std::chrono::steady_clock;

class MpiWorld {
 public:
  /// Initialises MPI (MPI_THREAD_SERIALIZED: calls come from one thread at a
  /// time, not always the main one) with errors returned, not fatal.
  static std::unique_ptr<MpiWorld> start(int& argc, char**& argv);
  MpiWorld(const MpiWorld&) = delete;
  MpiWorld& operator=(const MpiWorld&) = delete;
  /// Waits a moment for sends still in flight, then MPI_Finalize.
  ~MpiWorld();

  int rank() const { return rank_; }
  int size() const { return size_; }
  /// This host's name as MPI knows it.
  std::string host() const;

  /// Starts sending `bytes` to rank `to`; the buffer is kept until the send
  /// completes (later calls advance it).
  void send(int to, int tag, Bytes bytes);
  /// A whole message from `from` with `tag` when one is there, else nothing.
  /// A message being received stays in progress between calls.
  std::optional<Bytes> try_receive(int from, int tag);
  /// Ranks whose sends have not completed by `deadline` (empty: all done).
  std::vector<int> finish_sends(Clock::time_point deadline);
  /// Ends every rank of the job (MPI_Abort) with `status`.
  [[noreturn]] void abort_job(int status);

  /// A rank rank 0 gave up on (it died or stopped answering) while the job
  /// goes on without it (serve): nothing is sent to it or taken from it
  /// again, and the job must end through abort_job, since MPI_Finalize
  /// would wait for it.
  void mark_lost(int rank) {
    if (lost_.empty()) lost_.assign(static_cast<size_t>(size_), false);
    if (rank > 0 && rank < size_) lost_[static_cast<size_t>(rank)] = true;
  }
  bool lost(int rank) const {
    return !lost_.empty() && rank >= 0 && rank < size_ && lost_[static_cast<size_t>(rank)];
  }
  bool any_lost() const { return std::find(lost_.begin(), lost_.end(), true) != lost_.end(); }

  struct State;  // MPI's handles, kept out of this header

 private:
  MpiWorld();
  std::unique_ptr<State> state_;
  int rank_ = 0, size_ = 1;
  std::vector<bool> lost_;  // by rank; empty: none
};

/// Sleeps a little longer each call once `spins` quick checks found nothing,
/// so a rank waiting for a message leaves the cores to the ones working.
class PollBackoff {
 public:
  void wait();
  void reset() { spins_ = 0; }

 private:
  int spins_ = 0;
};

}  // namespace glmrt
