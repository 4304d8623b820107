// The lookup tables of ggml's non-linear and lattice quants, as ggml defines
// them in ggml/src/ggml-common.h (each definition in ggml_grids.cpp names its
// symbol there). A grid entry packs one group of values, one per byte, the
// first value in the lowest byte: 8 for the u64 grids, 4 for the u32 ones.
#pragma once

#include <array>
#include <cstdint>

namespace glmrt::plugin_support::ggml {

/// Bit j of a sign byte flips value j of a group of 8 (kmask_iq2xs).
extern const std::array<uint8_t, 8> kMaskIq2xs;
/// 7 stored sign bits to 8: the eighth makes the count of minus signs even
/// (ksigns_iq2xs).
extern const std::array<uint8_t, 128> kSignsIq2xs;
/// IQ4_NL and IQ4_XS code values (kvalues_iq4nl).
extern const std::array<int8_t, 16> kValuesIq4nl;
/// MXFP4's E2M1 codes times 2 (kvalues_mxfp4, that is kvalues_fp4).
extern const std::array<int8_t, 16> kValuesMxfp4;

// The lattices. Byte values: 8, 25, 43 (IQ2); 4 to 62 (IQ3_XXS); odd 1 to 15
// (IQ3_S); int8 -1, 0, 1 (IQ1, the CPU table, not ggml's iq1s_grid_gpu).
extern const std::array<uint64_t, 256> kIq2xxsGrid;  // iq2xxs_grid
extern const std::array<uint64_t, 512> kIq2xsGrid;   // iq2xs_grid
extern const std::array<uint64_t, 1024> kIq2sGrid;   // iq2s_grid
extern const std::array<uint32_t, 256> kIq3xxsGrid;  // iq3xxs_grid
extern const std::array<uint32_t, 512> kIq3sGrid;    // iq3s_grid
extern const std::array<uint64_t, 2048> kIq1sGrid;   // iq1s_grid

/// Value j (0-7) of a u64 grid entry, or 0-3 of a u32 one.
constexpr uint8_t grid_byte(uint64_t entry, int j) {
  return static_cast<uint8_t>(entry >> (8 * j));
}

}  // namespace glmrt::plugin_support::ggml
