// io plugins: read batches of extents from temporary files and compare them
// byte for byte with what was written.
#include "plugin_checks.h"

#include <glmrt/base/error.h>
#include <glmrt/base/memory.h>
#include <glmrt/conformance/plugin_conformance.h>
#include <glmrt/host/plugin_host.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <random>
#include <vector>

namespace glmrt::conformance {
namespace {

namespace fs = std::filesystem;

/// File sizes: multiples of 64 KiB, so extents padded to any alignment up to
/// that stay inside the file.
constexpr uint64_t kFileBytes[] = {3 * 1024 * 1024 + 192 * 1024, 1024 * 1024};

struct TestFile {
  fs::path path;
  std::vector<std::byte> content;
};

std::vector<TestFile> write_test_files(const fs::path& folder) {
  std::mt19937_64 random(42);
  std::vector<TestFile> files;
  for (size_t f = 0; f < std::size(kFileBytes); ++f) {
    TestFile file{folder / fmt::format("extents-{}.bin", f), std::vector<std::byte>(kFileBytes[f])};
    for (size_t k = 0; k + 8 <= file.content.size(); k += 8) {
      const uint64_t word = random();
      std::memcpy(file.content.data() + k, &word, 8);
    }
    std::ofstream out(file.path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(file.content.data()),
              static_cast<std::streamsize>(file.content.size()));
    if (!out) fail("conformance: cannot write {}", file.path.string());
    files.push_back(std::move(file));
  }
  return files;
}

struct PlannedExtent {
  int32_t file;
  uint64_t offset;
  uint64_t length;
};

/// Whole files, large and small extents at aligned offsets, and many small
/// ones to exercise the plugin's parallel reads.
std::vector<PlannedExtent> plan_extents(uint64_t alignment) {
  const uint64_t a = std::max<uint64_t>(alignment, 512);
  std::vector<PlannedExtent> plan = {
      {0, 0, kFileBytes[0]},
      {1, 0, kFileBytes[1]},
      {0, a, 5 * a},
      {1, 7 * a, a},
      {0, kFileBytes[0] - 3 * a, 3 * a},
  };
  for (uint64_t k = 0; k < 64; ++k)
    plan.push_back({static_cast<int32_t>(k % 2), (k * 13 % 200) * a, a});
  return plan;
}

}  // namespace

CheckReport run_io_conformance(const fs::path& plugin_file) {
  CheckReport report;
  const PluginHost host(std::vector<fs::path>{});
  MemoryBudget budget;
  HostServices services(budget, 2);
  check_rejects_unknown_setting(
      report, plugin_file, [&](const PluginChoice& bogus) { host.create_io(bogus, services); });

  PluginHandle<plugin::Io> io;
  try {
    io = host.create_io(PluginChoice{plugin_file.string(), {}, {}}, services);
    report.pass("create with default settings");
  } catch (const Error& e) {
    report.fail("create with default settings", e.what());
    return report;
  }
  const uint32_t alignment = io->alignment();
  const bool alignment_ok =
      alignment >= 1 && alignment <= (1u << 16) && (alignment & (alignment - 1)) == 0;
  report.expect(alignment_ok, "alignment is a power of two up to 64 KiB",
                fmt::format("alignment() = {}", alignment));
  if (!alignment_ok) return report;

  const TempFolder folder;
  const std::vector<TestFile> files = write_test_files(folder.path());
  std::vector<std::string> names;
  for (const TestFile& f : files) names.push_back(f.path.string());
  std::vector<const char*> paths;
  for (const std::string& n : names) paths.push_back(n.c_str());
  const glmrt_status opened = io->open_files(paths.data(), static_cast<int32_t>(paths.size()));
  if (!report.expect(
          opened == GLMRT_OK, "open_files",
          opened == GLMRT_OK ? "" : fmt::format("status {}: {}", opened, io->last_error())))
    return report;

  const std::vector<PlannedExtent> plan = plan_extents(alignment);
  std::vector<AlignedBlock> buffers;
  std::vector<glmrt_extent> extents;
  for (const PlannedExtent& p : plan) {
    buffers.emplace_back(p.length, std::max<size_t>(alignment, 64));
    extents.push_back({p.file, 0, p.offset, p.length, buffers.back().data()});
  }
  auto read_and_compare = [&](const std::string& name) {
    for (AlignedBlock& b : buffers) std::memset(b.data(), 0, b.size());
    const glmrt_status status = io->read(extents.data(), static_cast<int64_t>(extents.size()));
    if (!report.expect(
            status == GLMRT_OK, name + ": read returns OK",
            status == GLMRT_OK ? "" : fmt::format("status {}: {}", status, io->last_error())))
      return;
    size_t mismatched = 0, first = plan.size();
    for (size_t k = 0; k < plan.size(); ++k) {
      const std::byte* expected = files[plan[k].file].content.data() + plan[k].offset;
      if (std::memcmp(buffers[k].data(), expected, plan[k].length) != 0) {
        ++mismatched;
        first = std::min(first, k);
      }
    }
    report.expect(
        mismatched == 0, name + ": bytes match the files",
        mismatched == 0
            ? fmt::format("{} extents", plan.size())
            : fmt::format("{} of {} extents differ, first: file {} offset {} length {}", mismatched,
                          plan.size(), plan[first].file, plan[first].offset, plan[first].length));
  };
  read_and_compare("batch of extents");
  io->prefetch(extents.data(), static_cast<int64_t>(extents.size()));
  read_and_compare("after prefetch");

  AlignedBlock beyond_buffer(std::max<size_t>(alignment, 512), std::max<size_t>(alignment, 64));
  const uint64_t past_end = kFileBytes[1] + 4 * beyond_buffer.size();
  glmrt_extent beyond{1, 0, past_end, beyond_buffer.size(), beyond_buffer.data()};
  const glmrt_status status = io->read(&beyond, 1);
  const std::string message = io->last_error() ? io->last_error() : "";
  report.expect(status != GLMRT_OK && !message.empty(), "a read past the end of a file fails",
                fmt::format("status {}, last_error \"{}\"", status, message));
  return report;
}

}  // namespace glmrt::conformance
