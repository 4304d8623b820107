// Conformance checks of a kernels plugin: matmul against a float64 reference
// on every format and many shapes, plus how it treats bad input.
#pragma once

#include <glmrt/conformance/check_report.h>
#include <glmrt/conformance/matmul_case.h>
#include <glmrt/plugin/kernels.h>

#include <filesystem>

namespace glmrt::conformance {

/// Runs one case on `kernels`. Fails when any output is outside its tolerance
/// or not finite, when y is written outside [0, S*O), or when an aggregate
/// error exceeds what int8 activation quantization explains. Skips a
/// non-required format the plugin declines through supports(). With `hints`
/// (ABI 1.8, GLMRT_PRODUCT_* bits) the product goes through matmul_hinted():
/// a hint may change the rounding, never the tolerance.
CheckResult check_matmul_case(plugin::Kernels& kernels, const MatmulCase& matmul_case,
                              uint32_t hints = 0);

/// supports() accepts the required formats and refuses unknown element types
/// and packings; matmul() refuses an unsupported format or a too-short row
/// stride with an error status and a message, and treats S = 0 as a no-op.
CheckReport check_kernels_interface(plugin::Kernels& kernels);

/// Rows the batch-invariance check calls with: S = 1..this (odd and even,
/// below and above every tile width of the in-tree plugins).
constexpr int64_t kMaxInvarianceRows = 9;

/// Batch invariance: for S = 1..kMaxInvarianceRows, row r of one call with S
/// rows equals bit for bit the call with row r alone, on a few shapes (one
/// above the plugins' threading threshold). Speculative decoding relies on
/// it: a verified row must give the logits decoding it alone would.
CheckResult check_batch_invariance(plugin::Kernels& kernels, const WeightFormatSpec& format);

/// ABI 1.3: one grouped_matmul() call of products in every supported format
/// with several S, strided and shared rows gives each product bit for bit
/// what matmul() gives it alone, writes no y outside a row's O outputs, and
/// fails a list with a bad product (an error and a message; that product's
/// y unwritten). Skipped for a
/// plugin of an older minor (the host never calls it there).
CheckResult check_grouped_matmul(plugin::Kernels& kernels, int abi_minor);

/// ABI 1.3: grouped calls of many products of one format, S = 1 and S = 2
/// alternating (a decode step's experts), repeated: every call gives each
/// product bit for bit what matmul() gives it alone. Threads that share
/// scratch between tiles of different shapes fail it.
CheckResult check_grouped_matmul_side_by_side(plugin::Kernels& kernels, int abi_minor);

/// ABI 1.7: for every format and shape the plugin offers a row packing for,
/// pack_rows() on a copy of the rows (back to back, and padded) leaves the rows after the last
/// whole group as they were, and products of the packed rows (the whole matrix, one group, the last
/// group with the tail; S = 1..kMaxInvarianceRows) give bit for bit what the rows as stored give.
/// Skipped for an older plugin, or one that offers no packing.
CheckResult check_row_packing(plugin::Kernels& kernels, int abi_minor);

struct KernelsConformanceOptions {
  /// Thread counts the plugin is created with; every case runs with the first,
  /// one mid-size case per format with the others.
  std::vector<int> thread_counts = {2, 1, 3};
};

/// Loads the plugin at `plugin_file` through PluginHost and runs everything:
/// the interface checks, batch invariance and every case of every format, and
/// settings rejection.
CheckReport run_kernels_conformance(const std::filesystem::path& plugin_file,
                                    const KernelsConformanceOptions& options = {});

}  // namespace glmrt::conformance
