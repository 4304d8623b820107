#include <glmrt/base/elapsed_time.h>
#include <glmrt/base/error.h>
#include <glmrt/experts/io_channel.h>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <system_error>

namespace glmrt {
namespace {

// ABI 1.0's read() returns a status, no byte count. So that a 1.0 plugin
// which says OK after a short read is still caught, the channel writes a mark
// over the last bytes of every read before it and checks that the read
// overwrote it. The mark depends on the offset; a checkpoint whose bytes
// there equal it by chance (odds 2^-128) would be refused.
constexpr size_t kTailMarkBytes = 16;

std::array<std::byte, kTailMarkBytes> tail_mark(uint64_t offset) {
  std::array<std::byte, kTailMarkBytes> mark;
  uint64_t state = offset ^ 0x6a09e667f3bcc908ull;
  for (size_t k = 0; k < kTailMarkBytes; k += 8) {
    // splitmix64
    uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    std::memcpy(mark.data() + k, &z, 8);
  }
  return mark;
}

/// The last min(expected, 16) bytes a read must deliver.
std::span<std::byte> tail_of(const PlannedRead& r) {
  const size_t n = static_cast<size_t>(std::min<uint64_t>(r.span.expected, kTailMarkBytes));
  return {r.destination + r.span.expected - n, n};
}

glmrt_extent extent_of(const PlannedRead& r, uint64_t length) {
  return {r.file, 0, r.span.offset, length, r.destination};
}

}  // namespace

IoTicket::IoTicket(IoTicket&& other) noexcept {
  *this = std::move(other);
}

IoTicket& IoTicket::operator=(IoTicket&& other) noexcept {
  if (this != &other) {
    abandon();
    channel_ = std::exchange(other.channel_, nullptr);
    id_ = std::exchange(other.id_, 0);
    reads_ = std::move(other.reads_);
    results_ = std::move(other.results_);  // the buffer the plugin writes stays where it was
    failure_ = std::move(other.failure_);
    submitted_ = other.submitted_;
    landed_ = other.landed_;
  }
  return *this;
}

IoTicket::~IoTicket() {
  abandon();
}

void IoTicket::abandon() noexcept {
  if (!channel_) return;
  // Still in flight: the destinations may be freed after this, so wait.
  if (id_) channel_->io_.wait(id_);
  channel_->end_busy(*this);
  channel_ = nullptr;
  id_ = 0;
}

IoChannel::IoChannel(plugin::Io& io, int abi_minor, std::vector<std::filesystem::path> files)
    : io_(io), abi_minor_(abi_minor), files_(std::move(files)) {
  alignment_ = std::max<uint32_t>(io_.alignment(), 1);
  if ((alignment_ & (alignment_ - 1)) != 0 || alignment_ > (1u << 16))
    fail("io plugin asks for alignment {}, not a power of two up to 64 KiB", alignment_);
  std::vector<std::string> paths;
  for (const auto& f : files_) {
    std::error_code ec;
    const uint64_t size = std::filesystem::file_size(f, ec);
    if (ec) fail("cannot size {}: {}", f.string(), ec.message());
    sizes_.push_back(size);
    paths.push_back(f.string());
  }
  std::vector<const char*> c_paths;
  for (const auto& p : paths) c_paths.push_back(p.c_str());
  if (io_.open_files(c_paths.data(), static_cast<int32_t>(c_paths.size())) != GLMRT_OK)
    fail("io plugin could not open the model's safetensors files: {}", io_.last_error());
}

size_t IoChannel::destination_alignment() const {
  return std::max<size_t>(alignment_, 64);
}

PlannedRead IoChannel::plan(int file, uint64_t offset, uint64_t length,
                            std::byte* destination) const {
  if (file < 0 || file >= n_files()) fail("io: no file #{} among {} files", file, n_files());
  if (reinterpret_cast<uintptr_t>(destination) % destination_alignment() != 0)
    fail("io: destination for {} at offset {} is not aligned to {}", files_[file].string(), offset,
         destination_alignment());
  PlannedRead r;
  r.file = file;
  try {
    r.span = widen_read(offset, length, alignment_, sizes_[file]);
  } catch (const Error& e) {
    fail("{}: {}", files_[file].string(), e.what());
  }
  r.destination = destination;
  return r;
}

std::string IoChannel::where(const PlannedRead& r) const {
  return fmt::format("{} at offset {}", files_.at(r.file).string(), r.wanted_offset());
}

std::string IoChannel::unreported_short_read(const PlannedRead& r,
                                             std::string plugin_blamed) const {
  // A plugin reading with pread(2) meets the end of a truncated file as a
  // read of 0 bytes, which it may well call success.
  std::error_code ec;
  const std::filesystem::path& file = files_.at(r.file);
  const uint64_t now = std::filesystem::file_size(file, ec);
  const uint64_t end = r.span.offset + r.span.expected;
  if (ec || now >= end) return plugin_blamed;
  return fmt::format(
      "{} is shorter than its header says: it ends at byte {}, but the read of {} bytes from "
      "byte {} needs bytes up to {} (it held {} bytes when it was opened: was it truncated or "
      "replaced since?)",
      file.string(), now, r.span.expected, r.span.offset, end, sizes_.at(r.file));
}

SteadyTime IoChannel::landed_at(const IoTicket& ticket, SteadyTime noticed) const {
  if (ticket.landed_) return *ticket.landed_;
  if (abi_minor_ < GLMRT_ABI_MINOR_IO_COMPLETION_TIME || ticket.results_.empty()) return noticed;
  uint32_t longest = 0;
  for (const glmrt_extent_result& r : ticket.results_) {
    if (r.completed_us == 0) return noticed;  // not reported (e.g. a refused batch)
    longest = std::max(longest, r.completed_us);
  }
  // The plugin's clock starts a little after submitted_; never past the moment
  // the host saw the batch complete.
  return std::min(noticed, ticket.submitted_ + std::chrono::microseconds(longest));
}

void IoChannel::end_busy(const IoTicket& ticket) {
  const SteadyTime landed = landed_at(ticket, std::chrono::steady_clock::now());
  stats_.latency_seconds += seconds_between(ticket.submitted_, landed);
  busy_.landed(ticket.submitted_, landed);
  idle_gaps_.landed(landed);
  stats_.busy_seconds = busy_.seconds();
}

void IoChannel::step_reads_done(bool next_step_reads_submitted) {
  idle_gaps_.step_reads_done(next_step_reads_submitted);
  stats_.step_gaps = idle_gaps_.gaps();
}

IoTicket IoChannel::submit(std::span<const PlannedRead> reads, ReadPriority priority) {
  IoTicket ticket;
  ticket.reads_.assign(reads.begin(), reads.end());
  ticket.submitted_ = std::chrono::steady_clock::now();
  ticket.channel_ = this;
  ++stats_.batches;
  idle_gaps_.submitted(ticket.submitted_, busy_.idle());
  stats_.step_gaps = idle_gaps_.gaps();
  stats_.idle_between_steps_seconds = idle_gaps_.idle_seconds();
  busy_.submitted(ticket.submitted_);
  if (!asynchronous()) {
    ticket.failure_ = read_blocking(reads);
    ticket.landed_ = std::chrono::steady_clock::now();
    return ticket;
  }
  std::vector<glmrt_extent> extents;
  extents.reserve(reads.size());
  for (const PlannedRead& r : reads) extents.push_back(extent_of(r, r.span.length));
  ticket.results_.assign(reads.size(), glmrt_extent_result{0, GLMRT_ERR_INTERNAL, 0});
  glmrt_io_ticket id = 0;
  const bool urgent = priority == ReadPriority::urgent && prioritises();
  const auto n = static_cast<int64_t>(extents.size());
  const glmrt_status status =
      urgent ? io_.submit_urgent(extents.data(), n, ticket.results_.data(), &id)
             : io_.submit(extents.data(), n, ticket.results_.data(), &id);
  if (urgent && status == GLMRT_OK) ++stats_.urgent_batches;
  if (status != GLMRT_OK || id == 0)
    ticket.failure_ = ReadFailure{
        std::nullopt, fmt::format("the io plugin refused the batch: {}", io_.last_error())};
  else
    ticket.id_ = id;
  return ticket;
}

std::optional<ReadFailure> IoChannel::read_blocking(std::span<const PlannedRead> reads) {
  // A 1.0 read() must fill every byte it is given, so a read widened past
  // the end of its file is cut back to the end (only a plugin of alignment 1
  // meets such a read, since a 1.0 plugin that needs alignment cannot read a
  // file's unaligned tail anyway).
  std::vector<glmrt_extent> extents;
  extents.reserve(reads.size());
  for (const PlannedRead& r : reads) {
    extents.push_back(extent_of(r, r.span.expected));
    const auto mark = tail_mark(r.span.offset);
    const auto tail = tail_of(r);
    if (!tail.empty()) std::memcpy(tail.data(), mark.data(), tail.size());
  }
  if (io_.read(extents.data(), static_cast<int64_t>(extents.size())) != GLMRT_OK)
    return ReadFailure{std::nullopt, io_.last_error()};
  for (size_t k = 0; k < reads.size(); ++k) {
    const auto mark = tail_mark(reads[k].span.offset);
    const auto tail = tail_of(reads[k]);
    if (!tail.empty() && std::memcmp(tail.data(), mark.data(), tail.size()) == 0)
      return ReadFailure{
          k, unreported_short_read(
                 reads[k], fmt::format("the io plugin reported success but left the end of {} "
                                       "({} bytes) unwritten: a short read it did not report",
                                       where(reads[k]), reads[k].span.expected))};
  }
  return std::nullopt;
}

bool IoChannel::poll(IoTicket& ticket) {
  if (!ticket.pending() || !ticket.id_) return true;
  int32_t complete = 0;
  if (io_.poll(ticket.id_, &complete) != GLMRT_OK) return true;  // wait() will report
  return complete != 0;
}

size_t IoChannel::cancel(IoTicket& ticket) {
  if (!prioritises() || !ticket.pending() || !ticket.id_) return 0;
  int64_t cancelled = 0;
  // An unknown ticket cannot be ours while pending; a refusal gives up nothing.
  if (io_.cancel(ticket.id_, &cancelled) != GLMRT_OK) return 0;
  return static_cast<size_t>(std::max<int64_t>(cancelled, 0));
}

void IoChannel::count_cancelled(const IoTicket& t) {
  for (size_t k = 0; k < t.reads_.size(); ++k) {
    const glmrt_extent_result& result = t.results_[k];
    if (result.status == GLMRT_ERR_CANCELLED) {
      ++stats_.cancelled_reads;
      stats_.cancelled_bytes += t.reads_[k].span.expected;
    } else if (result.status == GLMRT_OK) {
      // Read before the rest was cancelled: the drive did that work.
      ++stats_.reads;
      stats_.bytes += std::min(result.bytes, t.reads_[k].span.expected);
    }
  }
}

std::optional<ReadFailure> IoChannel::check_results(const IoTicket& t, glmrt_status status) const {
  std::optional<size_t> cancelled;
  for (size_t k = 0; k < t.reads_.size(); ++k) {
    const PlannedRead& r = t.reads_[k];
    const glmrt_extent_result& result = t.results_[k];
    if (result.status == GLMRT_ERR_CANCELLED && prioritises()) {
      if (!cancelled) cancelled = k;
      continue;
    }
    if (result.status != GLMRT_OK) {
      const char* message = io_.last_error();
      return ReadFailure{k, message && *message ? std::string(message)
                                                : fmt::format("reading {} failed with status {}",
                                                              where(r), result.status)};
    }
    if (result.bytes < r.span.expected)
      return ReadFailure{
          k, unreported_short_read(
                 r, fmt::format("the io plugin reported success but read only {} of {} bytes of "
                                "{}: a short read it did not report",
                                result.bytes, r.span.expected, where(r)))};
    if (result.bytes > r.span.length)
      return ReadFailure{k, fmt::format("the io plugin says it read {} bytes into a read of {} "
                                        "bytes of {}",
                                        result.bytes, r.span.length, where(r))};
  }
  if (cancelled)
    return ReadFailure{
        *cancelled, fmt::format("the read of {} was cancelled", where(t.reads_[*cancelled])), true};
  if (status != GLMRT_OK)
    return ReadFailure{std::nullopt, fmt::format("the io plugin failed the batch (status {}): {}",
                                                 status, io_.last_error())};
  return std::nullopt;
}

std::optional<ReadFailure> IoChannel::wait(IoTicket& ticket) {
  if (!ticket.pending()) return ReadFailure{std::nullopt, "io: wait on a ticket not in flight"};
  std::optional<ReadFailure> failure = std::move(ticket.failure_);
  if (ticket.id_) {
    const glmrt_status status = io_.wait(ticket.id_);
    ticket.id_ = 0;
    failure = check_results(ticket, status);
  }
  end_busy(ticket);
  ticket.channel_ = nullptr;
  if (failure && failure->cancelled) count_cancelled(ticket);
  if (!failure) {
    stats_.reads += ticket.reads_.size();
    for (const PlannedRead& r : ticket.reads_) stats_.bytes += r.span.expected;
  }
  return failure;
}

void IoChannel::hint(std::span<const PlannedRead> reads) {
  std::vector<glmrt_extent> extents;
  extents.reserve(reads.size());
  for (const PlannedRead& r : reads)
    extents.push_back({r.file, 0, r.span.offset, r.span.expected, nullptr});
  io_.prefetch(extents.data(), static_cast<int64_t>(extents.size()));
}

}  // namespace glmrt
