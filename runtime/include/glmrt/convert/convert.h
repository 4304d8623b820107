// glmrt convert: a Hugging Face checkpoint (BF16/F16/F32, or FP8 e4m3 with
// 128x128 block scales) into a quantized streaming container (see
// conversion_plan.h for the layout, docs/convert.md for the options).
//
// Real-world behaviour: tensors stream block by block (bounded memory); rows
// are encoded on every core while the previous block is written with
// O_DIRECT; everything goes into OUT.partial, with a state file recording
// each finished output file and its XXH3-64, so a run interrupted for any
// reason resumes: finished files whose checksum still matches are kept, the
// rest rewritten. config.json (without quantization_config), the tokenizer
// files, chat_template.jinja, generation_config.json, the index and
// checksums.json are written last and OUT.partial renamed to OUT: a folder
// named OUT is always complete.
#pragma once

#include <glmrt/convert/conversion_plan.h>
#include <glmrt/convert/convert_options.h>
#include <glmrt/model_files/container_checksums.h>

#include <cstdint>
#include <string>

namespace glmrt {

struct ConvertResult {
  ConversionPlan plan;
  int files_written = 0, files_reused = 0;
  uint64_t bytes_written = 0, source_bytes = 0;
  double seconds = 0;
  QuantMethod method = QuantMethod::rtn;  // as run
  /// gptq: matrices rounded with error feedback (of them, routed gate/up by
  /// the layer's shared moments) / by rtn (no second moments, or too few
  /// rows), factors computed and their time.
  int64_t gptq_matrices = 0, gptq_shared_matrices = 0, rtn_matrices = 0, gptq_factors = 0;
  double gptq_factor_seconds = 0;
};

/// Converts; with options.dry_run only plans (result.plan). Throws
/// glmrt::Error naming the file/tensor on bad input, an OUT or OUT.partial
/// that is, holds or lies inside the source, an existing OUT without --force
/// or (even with it) one not written by convert or holding other files, a
/// stale OUT.partial (other options or input) without --force, a full disk. `stop_after_files` > 0
/// stops (throws) after that many files were written: a stand-in for an interruption, for tests.
ConvertResult convert_checkpoint(const ConvertOptions& options, int stop_after_files = 0);

/// The dry-run table: per class tensors, parameters, size and bits per
/// weight (scales included), and the total.
std::string conversion_summary(const ConversionPlan& plan);

/// Name of the file marking a folder as written by glmrt convert: it lists
/// every file convert put there, the only files --force may remove.
inline constexpr const char* kContainerMarkerFile = "glmrt-container.json";

}  // namespace glmrt
