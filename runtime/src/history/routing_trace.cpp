#include <glmrt/base/error.h>
#include <glmrt/base/warning.h>
#include <glmrt/history/routing_trace.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace glmrt {

ExpertUsage RoutingTrace::usage() const {
  ExpertUsage usage(layers, experts);
  for (const RoutingStep& step : steps) usage.record(step.layer, step.experts);
  return usage;
}

RoutingTrace read_routing_trace(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) fail("{}: cannot read the routing trace: {}", file.string(), std::strerror(errno));
  RoutingTrace trace;
  std::string line, word;
  int number = 0;
  auto bad = [&](std::string_view what) {
    fail("{}:{}: not a glmrt routing trace: {}", file.string(), number, what);
  };
  ++number;
  int version = 0;
  if (!std::getline(in, line) || !(std::istringstream(line) >> word >> version) ||
      word != "glmrt-routing-trace")
    bad("the first line is not `glmrt-routing-trace 1`");
  if (version != 1) bad(fmt::format("version {} (this glmrt reads version 1)", version));
  ++number;
  if (!std::getline(in, line) || !(std::istringstream(line) >> word >> trace.model_id) ||
      word != "model")
    bad("expected `model <id>`");
  ++number;
  if (!std::getline(in, line) ||
      !(std::istringstream(line) >> word >> trace.layers >> trace.experts >> trace.top_k) ||
      word != "shape" || trace.layers <= 0 || trace.experts <= 0 || trace.top_k <= 0)
    bad("expected `shape <layers> <experts> <experts per token>`");
  while (std::getline(in, line)) {
    ++number;
    if (line.empty()) continue;
    std::istringstream fields(line);
    RoutingStep step;
    if (!(fields >> step.layer >> step.positions) || step.layer < 0 || step.layer >= trace.layers ||
        step.positions <= 0)
      bad("a step line must start with a layer and a position count");
    const int64_t n = step.positions * trace.top_k;
    step.experts.reserve(static_cast<size_t>(n));
    int32_t id;
    while (fields >> id) {
      if (id < 0 || id >= trace.experts) bad(fmt::format("expert {} out of range", id));
      step.experts.push_back(id);
    }
    if (static_cast<int64_t>(step.experts.size()) != n)
      bad(fmt::format("{} expert ids, expected {} ({} positions x {})", step.experts.size(), n,
                      step.positions, trace.top_k));
    trace.steps.push_back(std::move(step));
  }
  return trace;
}

RoutingTraceWriter::RoutingTraceWriter(const std::filesystem::path& file,
                                       const std::string& model_id, int layers, int experts,
                                       int top_k)
    : file_(file) {
  out_ = std::fopen(file.c_str(), "w");
  if (!out_) fail("{}: cannot create the routing trace: {}", file.string(), std::strerror(errno));
  if (std::fprintf(out_, "glmrt-routing-trace 1\nmodel %s\nshape %d %d %d\n", model_id.c_str(),
                   layers, experts, top_k) < 0)
    failed_ = true;
}

RoutingTraceWriter::~RoutingTraceWriter() {
  if (!out_) return;
  try {
    close();
  } catch (const std::exception& e) {
    warn("{}", e.what());
  }
}

void RoutingTraceWriter::on_routed(int layer, int64_t positions, std::span<const int32_t> experts) {
  if (!out_ || failed_) return;
  std::string line = fmt::format("{} {}", layer, positions);
  for (int32_t id : experts) fmt::format_to(std::back_inserter(line), " {}", id);
  line += '\n';
  if (std::fwrite(line.data(), 1, line.size(), out_) != line.size() || std::fflush(out_) != 0)
    failed_ = true;
}

void RoutingTraceWriter::close() {
  if (!out_) return;
  const bool ok = std::fclose(out_) == 0 && !failed_;
  out_ = nullptr;
  if (!ok) fail("{}: writing the routing trace failed: {}", file_.string(), std::strerror(errno));
}

}  // namespace glmrt
