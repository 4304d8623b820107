// When a rank dies, mpirun ends every other rank of the job (SIGTERM, then
// SIGKILL a moment later), rank 0 included, before rank 0's own deadline
// could name the rank. So while rank 0 waits for ranks it keeps the words
// for what it waits for ready, and a SIGTERM arriving then prints them and
// ends the process with status 1 instead of dying silently; one arriving
// while it computes makes its next wait end at once, naming the ranks.
#pragma once

#include <glmrt/base/error.h>

#include <string>
#include <vector>

namespace glmrt {

/// A rank died, stopped answering or answered nonsense: the run cannot go
/// on, and the job must end (MPI_Abort), since MPI_Finalize would wait for
/// the missing rank.
class RankFault : public Error {
 public:
  using Error::Error;
};

class FaultReport {
 public:
  /// Installs the SIGTERM handler (rank 0, once per process).
  static void install();
  /// Whether a SIGTERM arrived while rank 0 was not waiting.
  static bool terminate_requested();

  /// While alive, rank 0 waits for `ranks` for `what`; `hosts` (by rank,
  /// "" or missing when not known yet) say where each runs.
  class Waiting {
   public:
    Waiting(const std::vector<int>& ranks, const std::vector<std::string>& hosts,
            const std::string& what);
    Waiting(const Waiting&) = delete;
    Waiting& operator=(const Waiting&) = delete;
    ~Waiting();
    /// `rank` has answered: it is no longer named.
    void answered(int rank);

   private:
    void publish() const;
    std::vector<int> ranks_;
    std::vector<std::string> hosts_;
    std::string what_;
  };
};

}  // namespace glmrt
