// The weight bytes one decode step reads from memory outside the routed
// experts: the resident part of the DRAM limit `glmrt bench --limits` reports.
#pragma once

#include <glmrt/profile/profile.h>

#include <cstdint>
#include <filesystem>

namespace glmrt::cli {

/// Every resident matrix and vector at the profile's precision, as the loader
/// stores it (memory_estimates.h), but the embedding tables, of which a step
/// reads one row, and the MTP layer, which only drafting runs. Worked out
/// from config.json and the safetensors headers alone.
uint64_t resident_bytes_per_decode_step(const Profile& profile,
                                        const std::filesystem::path& model_dir);

}  // namespace glmrt::cli
