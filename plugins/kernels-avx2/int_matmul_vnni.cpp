// int_matmul.cpp built for AVX-VNNI (-mavxvnni): the same tiles with the
// vpdpbusd dots, in namespace int_dots_vnni (int_formats.h).
#define GLMRT_INT_DOTS_VNNI 1
#include "int_matmul.cpp"
