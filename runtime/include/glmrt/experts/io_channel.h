// The host's side of one io plugin: opens the model's files in it, widens
// every wanted byte range to the plugin's alignment (clamped at the end of the
// file), submits batches asynchronously and checks each read's byte count.
// A 1.1 plugin reads in the background (submit, poll, wait); a 1.0 plugin has
// only the blocking read(), called at submit, whose missing byte count is made
// up for by a mark written over the end of every read and checked afterwards.
// A 1.6 plugin also takes urgent batches (a step's misses, served before
// read-ahead queued earlier) and cancels what a ticket has not started; for
// an older one an urgent batch is an ordinary one and nothing is cancelled.
#pragma once

#include <glmrt/experts/busy_time.h>
#include <glmrt/experts/drive_idle_gaps.h>
#include <glmrt/experts/widened_read.h>
#include <glmrt/plugin/io.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace glmrt {

/// One read as the plugin sees it: already widened, into an aligned
/// destination. The wanted bytes land at destination + span.lead.
struct PlannedRead {
  int file = 0;
  WidenedRead span;
  std::byte* destination = nullptr;
  uint64_t wanted_offset() const { return span.offset + span.lead; }
};

/// Why a batch failed: the read it names (index into the batch, or none when
/// a 1.0 plugin's read() failed without saying which) and what happened.
struct ReadFailure {
  std::optional<size_t> read;
  std::string message;
  /// Nothing failed: the host cancelled reads of the batch (IoChannel::cancel)
  /// before they started; the batch is incomplete.
  bool cancelled = false;
};

/// How soon the host needs a batch (ABI 1.6; older plugins: all `ahead`).
enum class ReadPriority : uint8_t {
  ahead,   // read-ahead: in submission order
  urgent,  // a step waits for it: before read-ahead not yet started
};

/// What went through the channel (successful batches only, except tickets).
struct IoStats {
  uint64_t batches = 0, reads = 0, bytes = 0;
  /// Wall time during which at least one batch was in flight, of batches
  /// waited on: until each landed, as a 1.4 plugin reports it (else until
  /// the host noticed, at poll or wait).
  double busy_seconds = 0;
  /// Sum over batches of submission to landing.
  double latency_seconds = 0;
  /// Batches submitted urgent to a plugin that serves them first (1.6).
  uint64_t urgent_batches = 0;
  /// Reads (extents) cancelled before they started, and their bytes.
  uint64_t cancelled_reads = 0, cancelled_bytes = 0;
  /// Steps whose gap to the next step's first read closed, and the seconds
  /// the drive idled in those gaps (drive_idle_gaps.h).
  uint64_t step_gaps = 0;
  double idle_between_steps_seconds = 0;
};

class IoChannel;

/// A submitted batch. Move-only; destroying a ticket still in flight waits
/// for it, so a destination is never freed under a read.
class IoTicket {
 public:
  IoTicket() = default;
  IoTicket(IoTicket&& other) noexcept;
  IoTicket& operator=(IoTicket&& other) noexcept;
  IoTicket(const IoTicket&) = delete;
  IoTicket& operator=(const IoTicket&) = delete;
  ~IoTicket();

  /// Submitted and not yet waited on.
  bool pending() const { return channel_ != nullptr; }

 private:
  friend class IoChannel;
  void abandon() noexcept;

  IoChannel* channel_ = nullptr;  // set while pending
  glmrt_io_ticket id_ = 0;        // the plugin's ticket (1.1)
  std::vector<PlannedRead> reads_;
  std::vector<glmrt_extent_result> results_;  // written by the plugin until waited
  std::optional<ReadFailure> failure_;        // decided at submit (1.0, refused batch)
  std::chrono::steady_clock::time_point submitted_;
  std::optional<std::chrono::steady_clock::time_point> landed_;  // known at submit (1.0)
};

class IoChannel {
 public:
  /// Opens `files` in `io` (a plugin of ABI minor `abi_minor`). Throws
  /// glmrt::Error with the plugin's message when it cannot, or when a file
  /// cannot be sized.
  IoChannel(plugin::Io& io, int abi_minor, std::vector<std::filesystem::path> files);
  IoChannel(const IoChannel&) = delete;
  IoChannel& operator=(const IoChannel&) = delete;

  /// The plugin's alignment (1 = none).
  uint32_t alignment() const { return alignment_; }
  /// Alignment of destinations the host uses: the plugin's, at least 64.
  size_t destination_alignment() const;
  /// Whether reads run in the background (a 1.1 plugin).
  bool asynchronous() const { return abi_minor_ >= 1; }
  /// Whether urgent batches overtake read-ahead and cancel() can give up
  /// reads (a 1.6 plugin).
  bool prioritises() const { return abi_minor_ >= GLMRT_ABI_MINOR_IO_PRIORITY; }

  int n_files() const { return static_cast<int>(files_.size()); }
  const std::vector<std::filesystem::path>& files() const { return files_; }
  const std::filesystem::path& file(int index) const { return files_.at(index); }
  uint64_t file_size(int index) const { return sizes_.at(index); }

  /// The read of [offset, offset + length) of `file` into `destination`
  /// (aligned to destination_alignment()); its wanted bytes land at
  /// destination + lead. Throws naming the file when the range lies beyond it.
  PlannedRead plan(int file, uint64_t offset, uint64_t length, std::byte* destination) const;

  /// Submits a batch. Never throws on a refused or failed read: the failure
  /// comes back from wait(). A 1.0 plugin reads here, blocking.
  IoTicket submit(std::span<const PlannedRead> reads, ReadPriority priority = ReadPriority::ahead);
  /// Gives up the reads of a pending ticket that have not started (a 1.6
  /// plugin; otherwise nothing); the number given up. The ticket is still
  /// waited on: wait() then reports a failure marked `cancelled`.
  size_t cancel(IoTicket& ticket);
  /// True when the ticket has completed (wait() will not block).
  bool poll(IoTicket& ticket);
  /// Blocks until the batch has completed and checks every read delivered its
  /// expected bytes. Nothing (success) or the first failure.
  std::optional<ReadFailure> wait(IoTicket& ticket);

  /// Tells the plugin these reads come soon (Io::prefetch); for reads the
  /// host cannot queue itself.
  void hint(std::span<const PlannedRead> reads);

  /// The step's last MoE layer has all its reads (see DriveIdleGaps).
  void step_reads_done(bool next_step_reads_submitted);

  const IoStats& stats() const { return stats_; }

 private:
  friend class IoTicket;
  /// A 1.0 plugin's blocking read of the batch, checked with tail marks.
  std::optional<ReadFailure> read_blocking(std::span<const PlannedRead> reads);
  std::optional<ReadFailure> check_results(const IoTicket& ticket, glmrt_status status) const;
  /// The counts of a batch some of whose reads were cancelled.
  void count_cancelled(const IoTicket& ticket);
  std::string where(const PlannedRead& read) const;
  /// A short read the plugin said was whole: the file's fault when it now
  /// ends before the read does (truncated after it was opened), else the plugin's.
  std::string unreported_short_read(const PlannedRead& read, std::string plugin_blamed) const;
  /// When the batch's last read landed: as the plugin reports it (1.4), else
  /// `noticed`, the moment the host found it complete.
  std::chrono::steady_clock::time_point landed_at(
      const IoTicket& ticket, std::chrono::steady_clock::time_point noticed) const;
  void end_busy(const IoTicket& ticket);

  plugin::Io& io_;
  int abi_minor_;
  uint32_t alignment_ = 1;
  std::vector<std::filesystem::path> files_;
  std::vector<uint64_t> sizes_;
  BusyTime busy_;
  DriveIdleGaps idle_gaps_;
  IoStats stats_;
};

}  // namespace glmrt
