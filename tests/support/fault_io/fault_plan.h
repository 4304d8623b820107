// What fault-io injects and on which read. A "read" is one extent handed to
// Io::submit() or Io::read(), numbered from 1 in the order the host submits
// them, across calls; prefetch hints are not reads. The plan is a pure
// function of the read number, so the reader thread that performs a read
// (ABI 1.1: reads run asynchronously) knows its fault from the number the
// queue gave it at submission.
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

  /// What happens to read number `read_number` (1-based).
  Fault fault_for(uint64_t read_number) const;

  bool short_reads_reported() const { return settings_.short_reads_reported; }

 private:
  FaultSettings settings_;
};

}  // namespace glmrt::fault_io
