// glmrt verify DIR: checks a converted container before it is trusted, as
// loading checks it, so OK means it loads — every file listed in
// checksums.json is there with its size and XXH3-64, every safetensors header
// parses and fits its file, every format stamp is known and fits its tensor,
// the config loads, every tensor it implies is there with its shape, dtype and
// scales (check_loadable), and every stored float tensor holds finite values.
// Each file is read once, for its checksum and its values.
#pragma once

#include <cstdint>
#include <filesystem>

namespace glmrt {

struct VerifyResult {
  int files = 0;
  uint64_t bytes = 0;
  int tensors = 0;
  double seconds = 0;
};

/// Throws glmrt::Error naming the first file or tensor found wrong.
VerifyResult verify_container(const std::filesystem::path& dir);

}  // namespace glmrt
