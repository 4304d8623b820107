// ggml_dots_k.cpp built for AVX-VNNI (-mavxvnni): the same kernels with
// vpdpbusd, in namespace ggml_dots_vnni (ggml_dot_kernels.h).
#define GLMRT_GGML_DOTS_VNNI 1
#include "ggml_dots_k.cpp"
