#include "expert_file.h"

#include <glmrt/base/error.h>
#include <glmrt/base/huge_pages.h>

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace glmrt::io_bench {
namespace {

std::string env_or(const char* name, const char* fallback) {
  const char* value = std::getenv(name);
  return value && *value ? value : fallback;
}

void write_file(const std::filesystem::path& path, uint64_t size) {
  std::filesystem::create_directories(path.parent_path());
  const auto space = std::filesystem::space(path.parent_path());
  if (space.available < size + (size >> 3))
    fail(
        "io_bench: {} has {:.1f} GB free, the expert file needs {:.1f} GB (set "
        "GLMRT_IO_BENCH_FILE or GLMRT_IO_BENCH_GB)",
        path.parent_path().string(), space.available / 1e9, size / 1e9);
  std::fprintf(stderr, "io_bench: writing %.1f GB of experts to %s\n", size / 1e9, path.c_str());
  const std::filesystem::path partial = path.string() + ".partial";
  const int fd = ::open(partial.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) fail("io_bench: cannot create {}: {}", partial.string(), std::strerror(errno));
  constexpr size_t kBlock = 64u << 20;
  HugePageBlock block(kBlock, nullptr, "io_bench");
  uint64_t state = 0x9e3779b97f4a7c15ull;
  for (uint64_t done = 0; done < size;) {
    auto* words = reinterpret_cast<uint64_t*>(block.data());
    for (size_t i = 0; i < kBlock / 8; ++i) {  // xorshift: incompressible, cheap
      state ^= state << 13;
      state ^= state >> 7;
      state ^= state << 17;
      words[i] = state;
    }
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kBlock, size - done));
    for (size_t written = 0; written < n;) {
      const ssize_t w = ::write(fd, block.data() + written, n - written);
      if (w < 0) {
        ::close(fd);
        fail("io_bench: writing {}: {}", partial.string(), std::strerror(errno));
      }
      written += static_cast<size_t>(w);
    }
    done += n;
  }
  ::fsync(fd);
  ::close(fd);
  std::filesystem::rename(partial, path);
}

}  // namespace

ExpertFile open_expert_file() {
  ExpertFile f;
  f.path = env_or("GLMRT_IO_BENCH_FILE", "/tmp/glmrt-io-bench/experts.bin");
  const double gb = std::atof(env_or("GLMRT_IO_BENCH_GB", "4").c_str());
  if (!(gb >= 0.1 && gb <= 1024)) fail("io_bench: GLMRT_IO_BENCH_GB must be from 0.1 to 1024");
  const uint64_t experts = static_cast<uint64_t>(gb * 1e9) / kExpertBytes;
  f.size = kHeaderBytes + experts * kExpertBytes + 1237;  // an odd tail, as real shards have
  std::error_code ec;
  if (std::filesystem::file_size(f.path, ec) != f.size || ec) write_file(f.path, f.size);
  f.experts = experts;
  return f;
}

}  // namespace glmrt::io_bench

namespace glmrt::io_bench {

ExpertFile open_mirror_file(const ExpertFile& original) {
  namespace fs = std::filesystem;
  ExpertFile f = original;
  const fs::path folder =
      env_or("GLMRT_IO_BENCH_MIRROR", (original.path.parent_path().string() + "-mirror").c_str());
  f.path = folder / original.path.filename();
  std::error_code ec;
  if (fs::file_size(f.path, ec) == f.size && !ec) return f;
  fs::create_directories(folder);
  const auto space = fs::space(folder);
  if (space.available < f.size + (f.size >> 3))
    fail("io_bench: {} has {:.1f} GB free, the mirror needs {:.1f} GB (set GLMRT_IO_BENCH_MIRROR)",
         folder.string(), space.available / 1e9, f.size / 1e9);
  std::fprintf(stderr, "io_bench: copying %s to %s\n", original.path.c_str(), f.path.c_str());
  const fs::path partial = f.path.string() + ".partial";
  fs::copy_file(original.path, partial, fs::copy_options::overwrite_existing);
  fs::rename(partial, f.path);
  return f;
}

}  // namespace glmrt::io_bench
