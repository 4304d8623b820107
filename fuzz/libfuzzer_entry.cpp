// libFuzzer's entry point for one target, chosen at compile time:
// GLMRT_FUZZ_TARGET is the function (fuzz_targets.h), GLMRT_FUZZ_NAME its name.
#include <cstddef>
#include <cstdint>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  // libFuzzer calls this once per input for the life of the process; the
  // scratch folder is made on the first call and removed at exit.
  static const glmrt::fuzz::ScratchDir scratch(GLMRT_FUZZ_NAME);
  return glmrt::fuzz::GLMRT_FUZZ_TARGET(glmrt::fuzz::Input(data, size), scratch);
}
