// Services the host lends to every plugin: memory (so the budget sees it),
// threading (so one pool serves everything, and a plugin's own I/O threads are
// the host's) and logging.
#pragma once

#include <glmrt/plugin/abi.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Body of one parallel_for chunk: handles indices [begin, end).
typedef void (*glmrt_range_fn)(void* context, int64_t begin, int64_t end);

/// Body of a thread started with start_thread; returns when the plugin asks it to.
typedef void (*glmrt_thread_fn)(void* context);

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

  // ---- ABI 1.1: present when abi_minor >= 1 (and struct_size covers them) ----

  /// Starts a thread owned by the host that runs fn(fn_context): how an io
  /// plugin gets the threads its asynchronous reads run on (declared to the
  /// host, which counts them and reports them; compute stays on
  /// parallel_for). `purpose` is a short label ("io-odirect reader").
  /// Returns a handle > 0, or 0 when the host refuses (then fail create()).
  /// An io_uring plugin needs no thread: the kernel does the work.
  uint64_t (*start_thread)(void* context, const char* purpose, glmrt_thread_fn fn,
                           void* fn_context);
  /// Waits until the thread's fn has returned (the plugin tells it to stop
  /// first) and releases the handle. Every started thread is joined, at the
  /// latest in the plugin object's destroy().
  void (*join_thread)(void* context, uint64_t thread);
} glmrt_host_services;

/// True when `host` offers the services of ABI minor 1 (start_thread, join_thread).
#define GLMRT_HOST_HAS_THREADS(host)                                            \
  ((host)->abi_minor >= 1 &&                                                    \
   (host)->struct_size >= offsetof(glmrt_host_services, join_thread) +          \
                              sizeof(((glmrt_host_services*)0)->join_thread) && \
   (host)->start_thread && (host)->join_thread)

#ifdef __cplusplus
}  // extern "C"
#endif
