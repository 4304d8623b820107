// The services every plugin borrows from the host: budgeted aligned memory,
// the thread count with an OpenMP parallel_for, logging to stderr, and the
// threads an io plugin runs its reads on.
#include <glmrt/base/error.h>
#include <glmrt/host/plugin_host.h>

#include <omp.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>

namespace glmrt {

/// The C callbacks below receive the HostServices as their context.
struct HostServicesAccess {
  static constexpr const char* kCategory = "plugin:alloc";
  // Each block carries its size and start just before the pointer handed out,
  // so free() can release exactly what alloc() charged.
  struct BlockHeader {
    void* start;
    size_t bytes;
  };

  static HostServices& self(void* context) { return *static_cast<HostServices*>(context); }

  static void* alloc(void* context, size_t bytes, size_t alignment) noexcept {
    if (alignment == 0) alignment = 64;
    if ((alignment & (alignment - 1)) != 0) return nullptr;  // not a power of two
    alignment = std::max(alignment, alignof(BlockHeader));
    const size_t header = (sizeof(BlockHeader) + alignment - 1) / alignment * alignment;
    const size_t total = (header + bytes + alignment - 1) / alignment * alignment;
    if (total < bytes) return nullptr;  // overflow
    try {
      self(context).budget_.charge(kCategory, bytes);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "glmrt: plugin allocation of %zu bytes refused: %s\n", bytes, e.what());
      return nullptr;
    }
    void* start = std::aligned_alloc(alignment, total);
    if (!start) {
      self(context).budget_.release(kCategory, bytes);
      return nullptr;
    }
    auto* user = static_cast<std::byte*>(start) + header;
    const BlockHeader block{start, bytes};
    std::memcpy(user - sizeof(BlockHeader), &block, sizeof(BlockHeader));
    return user;
  }

  static void free(void* context, void* ptr) noexcept {
    if (!ptr) return;
    BlockHeader block{};
    std::memcpy(&block, static_cast<std::byte*>(ptr) - sizeof(BlockHeader), sizeof(BlockHeader));
    self(context).budget_.release(kCategory, block.bytes);
    std::free(block.start);
  }

  static void parallel_for(void* context, int64_t n, int64_t grain, glmrt_range_fn fn,
                           void* fn_context) noexcept {
    if (n <= 0) return;
    const int64_t threads = std::max(1, self(context).n_threads());
    const int64_t chunk = std::max<int64_t>({grain, 1, (n + threads - 1) / threads});
    const int64_t n_chunks = (n + chunk - 1) / chunk;
    if (n_chunks == 1) {
      fn(fn_context, 0, n);
      return;
    }
    const int team = static_cast<int>(std::min(threads, n_chunks));
#pragma omp parallel for num_threads(team) schedule(static, 1)
    for (int64_t c = 0; c < n_chunks; ++c) fn(fn_context, c * chunk, std::min(n, (c + 1) * chunk));
  }

  static uint64_t start_thread(void* context, const char* purpose, glmrt_thread_fn fn,
                               void* fn_context) noexcept {
    if (!fn) return 0;
    HostServices& host = self(context);
    try {
      std::lock_guard lock(host.threads_mutex_);
      const uint64_t handle = host.next_thread_++;
      host.threads_.emplace(
          handle, HostServices::PluginThread{std::thread([fn, fn_context] { fn(fn_context); }),
                                             purpose && *purpose ? purpose : "unnamed"});
      return handle;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "glmrt: a plugin thread (%s) could not start: %s\n",
                   purpose ? purpose : "unnamed", e.what());
      return 0;
    }
  }

  static void join_thread(void* context, uint64_t handle) noexcept {
    HostServices& host = self(context);
    std::thread thread;
    {
      std::lock_guard lock(host.threads_mutex_);
      auto it = host.threads_.find(handle);
      if (it == host.threads_.end()) return;
      thread = std::move(it->second.thread);
      host.threads_.erase(it);
    }
    if (thread.joinable()) thread.join();
  }

  static void log(void*, int32_t level, const char* message) noexcept {
    static constexpr const char* kLevels[] = {"debug", "info", "warning", "error"};
    const char* name = level >= 0 && level <= 3 ? kLevels[level] : "log";
    std::fprintf(stderr, "glmrt: plugin %s: %s\n", name, message ? message : "");
  }
};

HostServices::HostServices(MemoryBudget& budget, int n_threads) : budget_(budget) {
  if (n_threads < 0) fail("thread count must be 0 (all cores) or positive, got {}", n_threads);
  services_.struct_size = sizeof(glmrt_host_services);
  services_.abi_major = GLMRT_ABI_MAJOR;
  services_.abi_minor = GLMRT_ABI_MINOR;
  services_.n_threads = n_threads == 0 ? omp_get_max_threads() : n_threads;
  services_.context = this;
  services_.alloc = &HostServicesAccess::alloc;
  services_.free = &HostServicesAccess::free;
  services_.parallel_for = &HostServicesAccess::parallel_for;
  services_.log = &HostServicesAccess::log;
  services_.start_thread = &HostServicesAccess::start_thread;
  services_.join_thread = &HostServicesAccess::join_thread;
}

HostServices::~HostServices() {
  std::map<uint64_t, PluginThread> left;
  {
    std::lock_guard lock(threads_mutex_);
    left.swap(threads_);
  }
  for (auto& [handle, plugin_thread] : left)
    if (plugin_thread.thread.joinable()) plugin_thread.thread.join();
}

std::map<std::string, int> HostServices::plugin_threads_by_purpose() const {
  std::lock_guard lock(threads_mutex_);
  std::map<std::string, int> counts;
  for (const auto& [handle, plugin_thread] : threads_) ++counts[plugin_thread.purpose];
  return counts;
}

}  // namespace glmrt
