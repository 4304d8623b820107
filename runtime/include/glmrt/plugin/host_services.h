// Services the host lends to every plugin: memory (so the budget sees it),
// threading (so one pool serves everything) and logging.
#pragma once

#include <glmrt/plugin/abi.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Body of one parallel_for chunk: handles indices [begin, end).
typedef void (*glmrt_range_fn)(void* context, int64_t begin, int64_t end);

typedef enum glmrt_log_level {
  GLMRT_LOG_DEBUG = 0,
  GLMRT_LOG_INFO = 1,
  GLMRT_LOG_WARNING = 2,
  GLMRT_LOG_ERROR = 3,
} glmrt_log_level;

typedef struct glmrt_host_services {
  uint32_t struct_size;
  uint16_t abi_major;
  uint16_t abi_minor;
  /// Threads the profile allows; kernels and io use at most this many.
  int32_t n_threads;
  void* context;  // passed back to every function below
  /// Aligned allocation charged to the process memory budget; NULL on failure.
  void* (*alloc)(void* context, size_t bytes, size_t alignment);
  void (*free)(void* context, void* ptr);
  /// Splits [0, n) into chunks of at least `grain` and runs them on the host's
  /// threads; returns when all are done.
  void (*parallel_for)(void* context, int64_t n, int64_t grain, glmrt_range_fn fn,
                       void* fn_context);
  void (*log)(void* context, int32_t level, const char* message);
} glmrt_host_services;

#ifdef __cplusplus
}  // extern "C"
#endif
