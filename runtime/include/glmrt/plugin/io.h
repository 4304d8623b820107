// I/O plugins: how routed experts come off the disk.
#pragma once

#include <glmrt/plugin/abi.h>
#include <glmrt/plugin/host_services.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One contiguous byte range of an opened file, read into `destination`.
/// `destination`, `offset` and `length` honour Io::alignment() when the
/// plugin asks for one (the host pads extents accordingly).
typedef struct glmrt_extent {
  int32_t file;  // index into the list given to open_files()
  uint32_t reserved;
  uint64_t offset;
  uint64_t length;
  void* destination;
} glmrt_extent;

#ifdef __cplusplus
}  // extern "C"

namespace glmrt::plugin {

class Io {
 public:
  /// Opens the files extents will name by index. Called once.
  virtual glmrt_status open_files(const char* const* paths, int32_t n_paths) noexcept = 0;

  /// Reads every extent completely; blocks until all are in memory. Parallel
  /// inside, up to the host's thread count or the plugin's own setting.
  virtual glmrt_status read(const glmrt_extent* extents, int64_t n_extents) noexcept = 0;

  /// A hint that these extents will be read soon; never blocks, never fails.
  virtual void prefetch(const glmrt_extent* extents, int64_t n_extents) noexcept = 0;

  /// Alignment (bytes) of offset, length and destination the plugin needs; 1 = none.
  virtual uint32_t alignment() const noexcept = 0;

  virtual const char* last_error() const noexcept = 0;
  virtual void destroy() noexcept = 0;

 protected:
  ~Io() = default;
};

}  // namespace glmrt::plugin
#endif
