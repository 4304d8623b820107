// glmrt plugin SDK — the binary contract between the glmrt core and a plugin.
//
// A plugin is a shared object named libglmrt-<name>.so that exports, with C
// linkage, one function:
//
//   extern "C" const glmrt_plugin_descriptor* glmrt_plugin_describe(void);
//
// The host reads the descriptor's struct_size, ABI version and kind before it
// calls anything else. Rules at the boundary, so a plugin built elsewhere keeps
// working: no STL types and no exceptions cross it; methods are noexcept and
// return a glmrt_status; views are pointer + length; the host owns memory (ask
// glmrt_host_services for buffers) and threading (kernels.h says what a
// kernels plugin may run its work on; io plugins start threads through
// start_thread).
//
// Versioning: major.minor. A different major is refused. Interfaces only grow at
// their end, so a plugin built against an older minor is accepted; the host
// calls a method added in minor N only when the plugin's abi_minor >= N, and a
// plugin uses a host service added in minor N only when the host's abi_minor
// (glmrt_host_services) >= N.
//
// What each minor added:
//   1.0  kernels, io (open_files, read, prefetch, alignment), draft; host
//        services alloc/free, parallel_for, log.
//   1.1  io: asynchronous reads (Io::submit -> ticket, Io::wait, Io::poll)
//        with a per-extent result (bytes read, status); a read that reaches
//        the end of a file stops there with GLMRT_OK and the byte count.
//        Host services: start_thread / join_thread (a plugin's I/O threads
//        are the host's).
//   1.2  draft: the draft contract (draft.h: proposals carry their
//        distribution q, the host runs the MTP layer on rows it owns, the
//        request carries the host's sampling incl. penalties; the
//        frequency penalty was appended later, behind struct_size). A draft
//        plugin needs 1.2: the host refuses older ones, whose draft table
//        has a different shape.
//   1.3  kernels: Kernels::grouped_matmul, a list of products (each with its
//        own weights, format, rows and row strides) in one call the plugin
//        schedules over its threads. Older kernels plugins keep working: the
//        host runs their products one matmul() at a time.
//   1.4  io: each extent's result carries when it completed
//        (glmrt_extent_result::completed_us, the former reserved field, which
//        older plugins leave 0).
//   1.5  weight formats: ggml's weight types (F16, Q4_0 ... Q6_K, the
//        i-quants, MXFP4) as element types GLMRT_GGML_BLOCKS_BASE + ggml
//        type id, rows of ggml's blocks as GGUF stores them
//        (weight_format.h). The host asks supports() about them only when
//        the plugin's abi_minor >= 5.
//   1.6  io: priority and cancellation (Io::submit_urgent: a batch served
//        before read-ahead queued with submit() that has not started;
//        Io::cancel: a ticket's extents not yet started complete at once
//        with GLMRT_ERR_CANCELLED, their destinations untouched). The host
//        calls neither on an older plugin: its misses are plain submits.
//   1.7  kernels: weights packed for the plugin (Kernels::row_packing,
//        Kernels::pack_rows): at load the host lets the plugin rearrange a
//        resident matrix's rows in place, in groups of rows, into a layout
//        of its own that keeps every byte count (glmrt_weight_format::
//        packing names it), so a one-token product runs as fast as a
//        prefill's. The host never asks an older plugin.
//   1.8  kernels: Kernels::matmul_hinted, a product with hints about its
//        outputs (GLMRT_PRODUCT_LOGITS: the step's logits, which no other
//        product or routing choice of the step reads), so a plugin whose
//        activation precision is a trade-off may take its fastest one
//        there. The host calls plain matmul() on an older plugin.
#pragma once

#include <stddef.h>
#include <stdint.h>

#define GLMRT_ABI_MAJOR 1
#define GLMRT_ABI_MINOR 8

/// The first minor with asynchronous io (Io::submit/wait/poll) and the host
/// services start_thread/join_thread.
#define GLMRT_ABI_MINOR_ASYNC_IO 1
/// The first minor whose draft contract a host runs (draft.h).
#define GLMRT_ABI_MINOR_DRAFT 2
/// The first minor with Kernels::grouped_matmul.
#define GLMRT_ABI_MINOR_GROUPED_MATMUL 3
/// The first minor whose io results say when each extent completed.
#define GLMRT_ABI_MINOR_IO_COMPLETION_TIME 4
/// The first minor with ggml's weight types as element types (weight_format.h).
#define GLMRT_ABI_MINOR_GGML_TYPES 5
/// The first minor with urgent io batches and cancellation (Io::submit_urgent, Io::cancel).
#define GLMRT_ABI_MINOR_IO_PRIORITY 6
/// The first minor with weights packed for the kernels plugin (Kernels::row_packing, pack_rows).
#define GLMRT_ABI_MINOR_ROW_PACKING 7
/// The first minor with hinted products (Kernels::matmul_hinted).
#define GLMRT_ABI_MINOR_PRODUCT_HINTS 8

/// Name of the one symbol every plugin exports.
#define GLMRT_PLUGIN_ENTRY_SYMBOL "glmrt_plugin_describe"

#ifdef __cplusplus
extern "C" {
#endif

/// 0 is success; anything else is an error whose text the object's
/// last_error() method returns.
typedef int32_t glmrt_status;
#define GLMRT_OK 0
#define GLMRT_ERR_INVALID_ARGUMENT 1
#define GLMRT_ERR_UNSUPPORTED 2
#define GLMRT_ERR_IO 3
#define GLMRT_ERR_OUT_OF_MEMORY 4
#define GLMRT_ERR_INTERNAL 5
/// ABI 1.6: an io extent the host cancelled before it started (Io::cancel);
/// not a failure of the plugin, and never returned to an older host.
#define GLMRT_ERR_CANCELLED 6

typedef enum glmrt_plugin_kind {
  GLMRT_PLUGIN_KERNELS = 1,
  GLMRT_PLUGIN_IO = 2,
  GLMRT_PLUGIN_DRAFT = 3,
} glmrt_plugin_kind;

/// One key/value setting from the profile's `plugins.<kind>.settings` map,
/// as text. A plugin rejects keys it does not know (create() fails with a
/// message naming the key), so typos in a profile never pass silently.
typedef struct glmrt_setting {
  const char* key;
  const char* value;
} glmrt_setting;

struct glmrt_host_services;

/// What a probe reports: whether this machine can run the plugin, and how
/// well (higher is better; `kernels: auto` picks the highest supported score).
typedef struct glmrt_probe_result {
  uint32_t struct_size;
  int32_t supported;  // 1 = runs here, 0 = does not
  int32_t score;      // meaningful when supported
  char reason[160];   // why not supported (or a short note), NUL-terminated
} glmrt_probe_result;

/// Creates the plugin's interface object for its kind (a glmrt::plugin::Kernels*,
/// Io* or Draft* as void*). On failure returns NULL and writes a NUL-terminated
/// message into `error` (at most error_len bytes). The object is released by its
/// own destroy() method, never by `delete` across the boundary.
typedef void* (*glmrt_create_fn)(const struct glmrt_host_services* host,
                                 const glmrt_setting* settings, size_t n_settings, char* error,
                                 size_t error_len);

typedef void (*glmrt_probe_fn)(glmrt_probe_result* out);

typedef struct glmrt_plugin_descriptor {
  uint32_t struct_size;  // sizeof(glmrt_plugin_descriptor) as the plugin saw it
  uint16_t abi_major;
  uint16_t abi_minor;
  uint32_t kind;  // glmrt_plugin_kind
  const char* name;
  const char* version;
  const char* description;
  glmrt_probe_fn probe;
  glmrt_create_fn create;
} glmrt_plugin_descriptor;

typedef const glmrt_plugin_descriptor* (*glmrt_describe_fn)(void);

#ifdef __cplusplus
}  // extern "C"
#endif

/// Plugins declare their entry point with this macro.
#if defined(__GNUC__)
#define GLMRT_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))
#else
#define GLMRT_PLUGIN_EXPORT extern "C"
#endif
