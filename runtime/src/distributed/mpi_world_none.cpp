// glmrt built without MPI (GLMRT_MPI=OFF): mpirun can start it, but it refuses.
#include <glmrt/base/error.h>
#include <glmrt/distributed/mpi_world.h>

#include <cstdlib>

namespace glmrt {

struct MpiWorld::State {};

MpiWorld::MpiWorld() = default;
MpiWorld::~MpiWorld() = default;

std::unique_ptr<MpiWorld> MpiWorld::start(int&, char**&) {
  fail(
      "started by mpirun as one of several ranks, but this glmrt was built without MPI "
      "(GLMRT_MPI=OFF or no MPI found): install libopenmpi-dev and build again");
}

std::string MpiWorld::host() const {
  return "?";
}
void MpiWorld::send(int, int, Bytes) {}
std::optional<Bytes> MpiWorld::try_receive(int, int) {
  return std::nullopt;
}
std::vector<int> MpiWorld::finish_sends(Clock::time_point) {
  return {};
}
void MpiWorld::abort_job(int status) {
  std::exit(status);
}

}  // namespace glmrt
