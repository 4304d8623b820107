// What the CPU glmrt runs on offers beyond baseline x86-64. The core is
// compiled for the baseline, so one binary runs on any x86-64; its few hot
// loops that gain from a newer instruction set have a variant compiled for
// it, chosen from these flags at run time (weights/group_fit_fixed_kernels.cpp,
// kv/row_math.cpp). Everything else ISA-specific lives in plugins, whose
// probes check their own needs.
#pragma once

namespace glmrt {

struct CpuFeatures {
  /// AVX2 and FMA (and the OS saves the ymm registers).
  bool avx2_fma = false;
  /// AVX-512 F, BW, DQ, VL and VNNI (and the OS saves the zmm registers).
  bool avx512_vnni = false;
};

/// This CPU's features, detected on the first call and cached.
const CpuFeatures& cpu_features();

}  // namespace glmrt

/// A function compiled for one of the feature sets above, in a core built for
/// baseline x86-64: call it only where the matching flag is set. Attributes,
/// not per-file flags, so the inline library code such a file instantiates
/// (and the linker may share with other files) stays baseline.
#define GLMRT_TARGET_AVX2_FMA __attribute__((target("avx2,fma")))
#define GLMRT_TARGET_AVX512_VNNI \
  __attribute__((target("avx2,fma,avx512f,avx512bw,avx512dq,avx512vl,avx512vnni")))
