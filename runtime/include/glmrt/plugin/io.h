// I/O plugins: how routed experts come off the disk.
//
// The host reads through an Io object from one thread at a time. Since ABI
// 1.1 reads are asynchronous: submit() hands over a batch of extents and
// returns a ticket at once; wait() blocks until the batch is done and poll()
// asks without blocking. A blocking read() is submit + wait. A 1.0 plugin
// (abi_minor 0) has read() only and the host calls nothing else of 1.1.
// Since ABI 1.6 a batch can be urgent (a read the host waits for now jumps
// ahead of read-ahead queued earlier) and a ticket can be cancelled (a guess
// the host no longer wants gives up the drive time it has not used yet).
//
// Alignment: when alignment() > 1, the host widens every extent it hands over
// to it: offset rounded down, length rounded up, destination aligned. Near the
// end of a file the widened length may run past the end; the read then stops
// at the end of the file (a short read the host expects, reported through the
// byte count, never an error).
#pragma once

#include <glmrt/plugin/abi.h>
#include <glmrt/plugin/host_services.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One contiguous byte range of an opened file, read into `destination`.
/// `destination`, `offset` and `length` honour Io::alignment() (the host
/// widens extents accordingly).
typedef struct glmrt_extent {
  int32_t file;  // index into the list given to open_files()
  uint32_t reserved;
  uint64_t offset;
  uint64_t length;
  void* destination;
} glmrt_extent;

/// How one extent of a submitted batch ended (ABI 1.1). Written by the plugin
/// before the batch's ticket completes; host memory.
typedef struct glmrt_extent_result {
  /// Bytes placed at destination, from offset on: length, or less when the
  /// file ends first (status stays GLMRT_OK) or the read failed.
  uint64_t bytes;
  /// GLMRT_OK, or why this extent failed (GLMRT_ERR_IO for EIO or a short
  /// read the plugin could not complete after retrying).
  glmrt_status status;
  /// ABI 1.4: microseconds from submit() to this extent's completion (its
  /// bytes placed, or its failure known), as the plugin's clock saw it; at
  /// least 1, UINT32_MAX when longer (71 minutes). 0: not reported (a plugin
  /// older than 1.4; the host then takes the moment it noticed completion
  /// at poll() or wait()). The host counts the drive busy from it, so a read
  /// that landed while the host computed is not counted as reading until
  /// the host looked.
  uint32_t completed_us;
} glmrt_extent_result;

/// Names one submitted batch until wait() releases it; never 0.
typedef uint64_t glmrt_io_ticket;

#ifdef __cplusplus
}  // extern "C"

namespace glmrt::plugin {

class Io {
 public:
  /// Opens the files extents will name by index. Called once.
  virtual glmrt_status open_files(const char* const* paths, int32_t n_paths) noexcept = 0;

  /// Reads every extent completely; blocks until all are in memory. Parallel
  /// inside, up to the host's thread count or the plugin's own setting. An
  /// extent the file ends before is an error here (1.0 semantics); submit()
  /// reports it as a byte count instead.
  virtual glmrt_status read(const glmrt_extent* extents, int64_t n_extents) noexcept = 0;

  /// A hint that these extents will be read soon; never blocks, never fails.
  /// The host calls it when it cannot read ahead itself (a 1.0 plugin, or
  /// experts that go through a staging buffer to be converted).
  virtual void prefetch(const glmrt_extent* extents, int64_t n_extents) noexcept = 0;

  /// Alignment (bytes) of offset, length and destination the plugin needs; 1 = none.
  virtual uint32_t alignment() const noexcept = 0;

  virtual const char* last_error() const noexcept = 0;
  virtual void destroy() noexcept = 0;

  // ---- ABI 1.1: called only when the plugin's abi_minor >= 1 ----

  /// Starts reading the extents and returns at once with `*ticket`. The
  /// plugin copies `extents`; `results` (n_extents entries) and every
  /// destination stay the plugin's until wait() on the ticket returns, and the
  /// host waits on every ticket it was given. Fails only when the batch could
  /// not be queued (a bad file index, no destination), then no ticket exists.
  virtual glmrt_status submit(const glmrt_extent* extents, int64_t n_extents,
                              glmrt_extent_result* results, glmrt_io_ticket* ticket) noexcept = 0;

  /// Blocks until every extent of the ticket has completed, then releases the
  /// ticket. GLMRT_OK when every result's status is OK (compare bytes with
  /// length: a read that stopped at the end of the file is OK); otherwise the
  /// status of the first failed extent, and last_error() names its file and
  /// offset.
  virtual glmrt_status wait(glmrt_io_ticket ticket) noexcept = 0;

  /// Sets *complete to 1 when every extent of the ticket has completed (wait()
  /// would not block), else 0. Does not release the ticket.
  virtual glmrt_status poll(glmrt_io_ticket ticket, int32_t* complete) noexcept = 0;

  // ---- ABI 1.6: called only when the plugin's abi_minor >= 6 ----

  /// submit(), for a batch the host needs now: its extents start before any
  /// extent queued with submit() that has not started yet (urgent batches
  /// among themselves in submission order). Extents already at the drive
  /// are not interrupted.
  virtual glmrt_status submit_urgent(const glmrt_extent* extents, int64_t n_extents,
                                     glmrt_extent_result* results,
                                     glmrt_io_ticket* ticket) noexcept = 0;

  /// Gives up the ticket's extents that have not started: each completes at
  /// once with 0 bytes and status GLMRT_ERR_CANCELLED, its destination
  /// untouched. Extents started or finished are left to end as usual. The
  /// host still waits on the ticket (which releases it; wait() returns
  /// GLMRT_ERR_CANCELLED when an extent was cancelled and none failed).
  /// `*cancelled` (may be NULL) receives how many extents were cancelled.
  /// GLMRT_ERR_INVALID_ARGUMENT for an unknown ticket.
  virtual glmrt_status cancel(glmrt_io_ticket ticket, int64_t* cancelled) noexcept = 0;

 protected:
  ~Io() = default;
};

}  // namespace glmrt::plugin
#endif
