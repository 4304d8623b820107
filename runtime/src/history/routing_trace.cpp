// Writing a routing trace: into a temporary file renamed into place only when
// every step was written, never over anything but an earlier trace.
#include <glmrt/base/error.h>
#include <glmrt/base/warning.h>
#include <glmrt/history/routing_trace.h>

#include <fmt/format.h>

namespace glmrt {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kTraceMagic = "glmrt-routing-trace ";

}  // namespace

OutputKind routing_trace_output_kind() {
  return {"a routing trace", [](const fs::path& file) {
            return read_file_head(file, kTraceMagic.size()) == kTraceMagic;
          }};
}

ExpertUsage RoutingTrace::usage() const {
  ExpertUsage usage(layers, experts);
  for (const RoutingStep& step : steps) usage.record(step.layer, step.experts);
  return usage;
}

RoutingTraceWriter::RoutingTraceWriter(const fs::path& file, const std::string& model_id,
                                       RoutingShape shape, const fs::path& model_dir, bool force) {
  out_ =
      std::make_unique<AtomicFile>(file, OutputRule{routing_trace_output_kind(), model_dir, force});
  out_->write(fmt::format("{}{}\nmodel {}\nshape {} {} {}\n", kTraceMagic, kRoutingTraceVersion,
                          model_id, shape.layers, shape.experts, shape.top_k));
}

RoutingTraceWriter::~RoutingTraceWriter() {
  if (out_)
    warn("{}: routing trace not written (the run did not finish); {}", out_->file().string(),
         failure_.empty() ? "nothing was replaced" : failure_);
}

void RoutingTraceWriter::on_routed(int layer, int64_t positions, std::span<const int32_t> experts) {
  if (!out_ || !failure_.empty()) return;
  std::string line = fmt::format("{} {}", layer, positions);
  for (int32_t id : experts) fmt::format_to(std::back_inserter(line), " {}", id);
  line += '\n';
  try {
    out_->write(line);
    ++steps_;
  } catch (const std::exception& e) {
    failure_ = e.what();
    warn("routing trace: {}; the run goes on, the trace will not be kept", failure_);
  }
}

void RoutingTraceWriter::close() {
  if (!out_) return;
  // Released first: whatever happens, the destructor has nothing left to do.
  const std::unique_ptr<AtomicFile> out = std::move(out_);
  const fs::path file = out->file();
  try {
    if (!failure_.empty()) fail("{}", failure_);
    out->write(fmt::format("end {}\n", steps_));
    out->commit();
  } catch (const std::exception& e) {
    fail("{}: writing the routing trace failed: {}; {} was left as it was", file.string(), e.what(),
         file.string());
  }
}

}  // namespace glmrt
