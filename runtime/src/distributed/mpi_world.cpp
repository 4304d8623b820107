// MPI proper. Compiled only when GLMRT_MPI is on (mpi_world_none.cpp otherwise).
#include <glmrt/base/error.h>
#include <glmrt/distributed/fault_report.h>
#include <glmrt/distributed/mpi_world.h>

#include <mpi.h>

#include <algorithm>
#include <list>
#include <map>
#include <utility>

namespace glmrt {
namespace {

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  if (MPI_Error_string(code, text, &length) != MPI_SUCCESS)
    return fmt::format("MPI error {}", code);
  return std::string(text, static_cast<size_t>(length));
}

// `peer`: the rank the call was about (-1: none). A failure a dead rank
// causes names it, and is a RankFault: the job must end, since
// MPI_Finalize would wait for that rank.
void check(int code, const char* what, int peer = -1) {
  if (code == MPI_SUCCESS) return;
  if (peer < 0) fail("MPI: {} failed: {}", what, mpi_error_text(code));
  throw RankFault(fmt::format(
      "MPI: {} rank {} failed: {}: that rank stopped or cannot be reached; the run is incomplete",
      what, peer, mpi_error_text(code)));
}

}  // namespace

struct MpiWorld::State {
  struct Send {
    int to;
    Bytes bytes;
    MPI_Request request;
  };
  struct Receive {
    Bytes bytes;
    MPI_Request request;
  };
  std::list<Send> sends;                            // stable addresses: MPI holds the buffers
  std::map<std::pair<int, int>, Receive> receives;  // by (from, tag), in progress

  void advance_sends() {
    for (auto it = sends.begin(); it != sends.end();) {
      int done = 0;
      // A rank that died fails its sends: the error names it.
      check(MPI_Test(&it->request, &done, MPI_STATUS_IGNORE), "MPI_Test of a send to", it->to);
      it = done ? sends.erase(it) : std::next(it);
    }
  }
};

MpiWorld::MpiWorld() : state_(std::make_unique<State>()) {}

std::unique_ptr<MpiWorld> MpiWorld::start(int& argc, char**& argv) {
  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided), "MPI_Init_thread");
  std::unique_ptr<MpiWorld> world(new MpiWorld());
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  if (provided < MPI_THREAD_SERIALIZED)
    fail("MPI: this MPI library gives thread level {}, glmrt needs MPI_THREAD_SERIALIZED",
         provided);
  check(MPI_Comm_rank(MPI_COMM_WORLD, &world->rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(MPI_COMM_WORLD, &world->size_), "MPI_Comm_size");
  return world;
}

MpiWorld::~MpiWorld() {
  try {
    finish_sends(Clock::now() + std::chrono::seconds(2));
  } catch (const std::exception&) {
    // A peer that is gone cannot take its last message; finalising matters more.
  }
  for (auto& [key, receive] : state_->receives) MPI_Cancel(&receive.request);
  MPI_Finalize();
}

std::string MpiWorld::host() const {
  char name[MPI_MAX_PROCESSOR_NAME];
  int length = 0;
  if (MPI_Get_processor_name(name, &length) != MPI_SUCCESS) return "?";
  return std::string(name, static_cast<size_t>(length));
}

void MpiWorld::send(int to, int tag, Bytes bytes) {
  if (lost(to)) return;  // it would never take it
  state_->advance_sends();
  auto& s = state_->sends.emplace_back(State::Send{to, std::move(bytes), MPI_REQUEST_NULL});
  check(MPI_Isend(s.bytes.data(), static_cast<int>(s.bytes.size()), MPI_BYTE, to, tag,
                  MPI_COMM_WORLD, &s.request),
        "MPI_Isend to", to);
}

std::optional<Bytes> MpiWorld::try_receive(int from, int tag) {
  if (lost(from)) return std::nullopt;
  state_->advance_sends();
  const auto key = std::make_pair(from, tag);
  auto it = state_->receives.find(key);
  if (it == state_->receives.end()) {
    int found = 0;
    MPI_Message message;
    MPI_Status status;
    check(MPI_Improbe(from, tag, MPI_COMM_WORLD, &found, &message, &status), "MPI_Improbe from",
          from);
    if (!found) return std::nullopt;
    int count = 0;
    check(MPI_Get_count(&status, MPI_BYTE, &count), "MPI_Get_count from", from);
    State::Receive receive{Bytes(static_cast<size_t>(count)), MPI_REQUEST_NULL};
    check(MPI_Imrecv(receive.bytes.data(), count, MPI_BYTE, &message, &receive.request),
          "MPI_Imrecv from", from);
    it = state_->receives.emplace(key, std::move(receive)).first;
  }
  int done = 0;
  check(MPI_Test(&it->second.request, &done, MPI_STATUS_IGNORE), "MPI_Test of a receive from",
        from);
  if (!done) return std::nullopt;
  Bytes bytes = std::move(it->second.bytes);
  state_->receives.erase(it);
  return bytes;
}

std::vector<int> MpiWorld::finish_sends(Clock::time_point deadline) {
  PollBackoff backoff;
  for (;;) {
    state_->advance_sends();
    if (std::all_of(state_->sends.begin(), state_->sends.end(),
                    [&](const State::Send& s) { return lost(s.to); }))
      return {};
    if (Clock::now() >= deadline) break;
    backoff.wait();
  }
  std::vector<int> late;
  for (const auto& s : state_->sends)
    if (!lost(s.to)) late.push_back(s.to);
  std::sort(late.begin(), late.end());
  late.erase(std::unique(late.begin(), late.end()), late.end());
  return late;
}

void MpiWorld::abort_job(int status) {
  MPI_Abort(MPI_COMM_WORLD, status);
  std::abort();  // MPI_Abort does not return; this keeps [[noreturn]] honest
}

}  // namespace glmrt
