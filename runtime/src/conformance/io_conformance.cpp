// io plugins: read tensors at real, unaligned offsets of temporary files the
// way the host does (widened to the plugin's alignment, clamped at the end of
// the file), one ending at an unaligned end of file, and compare them byte for
// byte with what was written; then the plugin's own calls: read(), submit,
// poll and wait (ABI 1.1), a read running past the end of a file, urgent
// reads and cancellation (ABI 1.6, io_priority_conformance.h).
#include "io_priority_conformance.h"
#include "plugin_checks.h"

#include <glmrt/base/error.h>
#include <glmrt/base/huge_pages.h>
#include <glmrt/conformance/plugin_conformance.h>
#include <glmrt/experts/io_channel.h>
#include <glmrt/host/plugin_host.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

namespace glmrt::conformance {
namespace {

namespace fs = std::filesystem;

/// Odd sizes, like safetensors files: neither ends on a block boundary.
constexpr uint64_t kFileBytes[] = {3 * 1024 * 1024 + 192 * 1024 + 1237, 1024 * 1024 + 77};

struct TestFile {
  fs::path path;
  std::vector<std::byte> content;
};

std::vector<TestFile> write_test_files(const fs::path& folder) {
  std::mt19937_64 random(42);
  std::vector<TestFile> files;
  for (size_t f = 0; f < std::size(kFileBytes); ++f) {
    TestFile file{folder / fmt::format("extents-{}.safetensors", f),
                  std::vector<std::byte>(kFileBytes[f])};
    for (std::byte& b : file.content) b = static_cast<std::byte>(random());
    std::ofstream out(file.path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(file.content.data()),
              static_cast<std::streamsize>(file.content.size()));
    if (!out) fail("conformance: cannot write {}", file.path.string());
    files.push_back(std::move(file));
  }
  return files;
}

struct Tensor {
  int32_t file;
  uint64_t offset;
  uint64_t length;
};

/// Where a checkpoint's tensors lie: after a header of odd length, packed
/// back to back at unaligned offsets, a large one spanning many blocks, one
/// ending at the (unaligned) end of each file, tiny ones sharing a block, and
/// many small ones to exercise parallel reads.
std::vector<Tensor> plan_tensors() {
  std::vector<Tensor> plan = {
      {0, 8 + 1229, 1},
      {0, 8 + 1230, 24577},
      {0, 8 + 1230 + 24577, 2 * 1024 * 1024 + 3},
      {0, kFileBytes[0] - 70001, 70001},
      {1, kFileBytes[1] - 333, 333},
      {1, 4095, 2},
      {1, 4097, 1},
      {1, 0, kFileBytes[1]},
      {0, 0, kFileBytes[0]},
  };
  for (uint64_t k = 0; k < 48; ++k)
    plan.push_back({static_cast<int32_t>(k % 2), 1 + k * 17011, 1000 + k * 37});
  return plan;
}

/// One buffer holding every tensor's widened read, each at an aligned place.
struct Placed {
  HugePageBlock buffer;
  std::vector<PlannedRead> reads;
};

Placed place(const IoChannel& channel, const std::vector<Tensor>& plan) {
  std::vector<uint64_t> at;
  uint64_t bytes = 0;
  for (const Tensor& t : plan) {
    at.push_back(bytes);
    const WidenedRead w =
        widen_read(t.offset, t.length, channel.alignment(), channel.file_size(t.file));
    bytes = align_up(bytes + w.length, channel.destination_alignment());
  }
  Placed placed{HugePageBlock(bytes, nullptr, "io conformance"), {}};
  for (size_t k = 0; k < plan.size(); ++k)
    placed.reads.push_back(
        channel.plan(plan[k].file, plan[k].offset, plan[k].length, placed.buffer.data() + at[k]));
  return placed;
}

/// How many tensors' wanted bytes differ from the files; names the first.
std::string compare(const std::vector<TestFile>& files, const std::vector<Tensor>& plan,
                    const Placed& placed, size_t& mismatched) {
  mismatched = 0;
  std::string first;
  for (size_t k = 0; k < plan.size(); ++k) {
    const std::byte* expected = files[plan[k].file].content.data() + plan[k].offset;
    const std::byte* got = placed.reads[k].destination + placed.reads[k].span.lead;
    if (std::memcmp(got, expected, plan[k].length) == 0) continue;
    if (mismatched++ == 0)
      first = fmt::format("first: file {} offset {} length {}", plan[k].file, plan[k].offset,
                          plan[k].length);
  }
  return first;
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
  std::vector<fs::path> paths;
  for (const TestFile& f : files) paths.push_back(f.path);
  std::unique_ptr<IoChannel> channel;
  try {
    channel = std::make_unique<IoChannel>(*io, io.info().abi_minor, paths);
    report.pass("open_files");
  } catch (const Error& e) {
    report.fail("open_files", e.what());
    return report;
  }

  const std::vector<Tensor> plan = plan_tensors();
  Placed placed = place(*channel, plan);
  auto read_and_compare = [&](const std::string& name) {
    std::memset(placed.buffer.data(), 0, placed.buffer.size());
    IoTicket ticket = channel->submit(placed.reads);
    const std::optional<ReadFailure> failure = channel->wait(ticket);
    if (!report.expect(!failure, name + ": every read delivers its bytes",
                       failure ? failure->message : ""))
      return;
    size_t mismatched = 0;
    const std::string first = compare(files, plan, placed, mismatched);
    report.expect(mismatched == 0, name + ": bytes match the files",
                  mismatched == 0
                      ? fmt::format("{} tensors at unaligned offsets", plan.size())
                      : fmt::format("{} of {} tensors differ, {}", mismatched, plan.size(), first));
  };
  read_and_compare("tensors widened to the alignment");
  channel->hint(placed.reads);
  read_and_compare("after prefetch");

  if (channel->asynchronous()) {
    // Several tickets at once, followed with poll until they complete.
    std::memset(placed.buffer.data(), 0, placed.buffer.size());
    std::vector<IoTicket> tickets;
    const size_t third = placed.reads.size() / 3;
    for (size_t begin = 0; begin < placed.reads.size(); begin += third)
      tickets.push_back(channel->submit(
          std::span(placed.reads).subspan(begin, std::min(third, placed.reads.size() - begin))));
    bool all_complete = false;
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    while (!all_complete && std::chrono::steady_clock::now() < give_up) {
      all_complete = std::all_of(tickets.begin(), tickets.end(),
                                 [&](IoTicket& t) { return channel->poll(t); });
      if (!all_complete) std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    report.expect(all_complete, "poll reports every ticket complete", "");
    std::string failures;
    for (IoTicket& t : tickets)
      if (auto failure = channel->wait(t)) failures += failure->message + "; ";
    size_t mismatched = 0;
    const std::string first = compare(files, plan, placed, mismatched);
    report.expect(failures.empty() && mismatched == 0, "tickets in flight together",
                  failures.empty() ? first : failures);

    // The plugin itself: an aligned read running past the end stops there.
    HugePageBlock tail(2 * alignment + 4096, nullptr, "io conformance");
    const uint64_t offset = (kFileBytes[1] - 1) / alignment * alignment;
    glmrt_extent extent{1, 0, offset, align_up(kFileBytes[1] - offset, alignment) + alignment,
                        tail.data()};
    glmrt_extent_result result{};
    glmrt_io_ticket id = 0;
    const auto before_submit = std::chrono::steady_clock::now();
    const bool submitted = io->submit(&extent, 1, &result, &id) == GLMRT_OK && id != 0;
    const glmrt_status status = submitted ? io->wait(id) : GLMRT_ERR_INTERNAL;
    const auto waited_us = std::chrono::duration_cast<std::chrono::microseconds>(
                               std::chrono::steady_clock::now() - before_submit)
                               .count();
    if (io.info().abi_minor >= GLMRT_ABI_MINOR_IO_COMPLETION_TIME)
      report.expect(result.completed_us >= 1 && result.completed_us <= waited_us + 1,
                    "a result says when its extent completed (ABI 1.4)",
                    fmt::format("completed_us {}, but submit to wait took {} us",
                                result.completed_us, waited_us));
    report.expect(
        status == GLMRT_OK && result.status == GLMRT_OK && result.bytes == kFileBytes[1] - offset &&
            std::memcmp(tail.data(), files[1].content.data() + offset, kFileBytes[1] - offset) == 0,
        "a read past the end of a file stops there with the byte count",
        fmt::format("status {}, result status {}, {} bytes of {} expected: {}", status,
                    result.status, result.bytes, kFileBytes[1] - offset, io->last_error()));

    check_io_priority(report, *io, io.info().abi_minor, alignment, files[0].content);
  }

  // read(), the blocking call of every minor, on aligned extents inside a file.
  HugePageBlock whole(kFileBytes[0], nullptr, "io conformance");
  const uint64_t inside = kFileBytes[0] / alignment * alignment;
  glmrt_extent aligned_extent{0, 0, 0, inside, whole.data()};
  const glmrt_status read_status = io->read(&aligned_extent, 1);
  report.expect(
      read_status == GLMRT_OK && std::memcmp(whole.data(), files[0].content.data(), inside) == 0,
      "read() of an aligned extent", fmt::format("status {}: {}", read_status, io->last_error()));

  HugePageBlock beyond_buffer(std::max<size_t>(alignment, 512), nullptr, "io conformance");
  const uint64_t past_end = align_up(kFileBytes[1], alignment) + 4 * beyond_buffer.size();
  glmrt_extent beyond{1, 0, past_end, beyond_buffer.size(), beyond_buffer.data()};
  const glmrt_status status = io->read(&beyond, 1);
  const std::string message = io->last_error() ? io->last_error() : "";
  report.expect(status != GLMRT_OK && !message.empty(), "read() past the end of a file fails",
                fmt::format("status {}, last_error \"{}\"", status, message));
  return report;
}

}  // namespace glmrt::conformance
