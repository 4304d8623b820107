// What fault-io injects and on which read. A "read" is one extent handed to
// Io::read(), numbered from 1 in the order the host submits them, across
// calls; prefetch hints are not reads. The plan is pure bookkeeping, apart
// from the file I/O, so an asynchronous front end (ABI 1.1) can number reads
// at submission and carry each Fault to whichever thread performs the read.
#pragma once

#include <glmrt/plugin/abi.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace glmrt::fault_io {

/// The settings fault-io accepts from a profile's plugins.io.settings.
struct FaultSettings {
  uint64_t eio_at = 0;            // this read fails with EIO; 0 = none
  uint64_t short_read_at = 0;     // this read delivers half its bytes; 0 = none
  uint64_t short_read_every = 0;  // so does every n-th read; 0 = none
  /// A short read returns GLMRT_ERR_IO naming the shortfall (an honest
  /// plugin); false returns GLMRT_OK (a broken plugin the host must catch).
  bool short_reads_reported = true;
  uint32_t latency_ms = 0;  // slept before every read
};

/// Parses the settings; an unknown key or a bad value returns false with the
/// reason in `error`.
bool parse_settings(const glmrt_setting* settings, size_t n_settings, FaultSettings& out,
                    std::string& error);

enum class FaultKind { none, eio, short_read };

/// What happens to one read.
struct Fault {
  uint64_t read_number = 0;  // 1-based
  FaultKind kind = FaultKind::none;
  uint32_t latency_ms = 0;
};

class FaultPlan {
 public:
  explicit FaultPlan(const FaultSettings& settings) : settings_(settings) {}

  /// Numbers the next read and says what happens to it. Call in submission
  /// order, from one thread at a time.
  Fault next();

  bool short_reads_reported() const { return settings_.short_reads_reported; }

 private:
  FaultSettings settings_;
  uint64_t reads_ = 0;
};

}  // namespace glmrt::fault_io
