// Reading a routing trace: every line checked whole (no trailing bytes, ids
// in range, no expert twice in one position), the shape bounded before the
// replay allocates anything from it, and a cut trace refused.
#include <glmrt/base/error.h>
#include <glmrt/base/input_file.h>
#include <glmrt/base/printable.h>
#include <glmrt/base/warning.h>
#include <glmrt/history/routing_trace.h>

#include <fmt/format.h>

#include <charconv>
#include <limits>

namespace glmrt {
namespace {

/// Fields of one line, separated by single or repeated spaces.
class TraceLineFields {
 public:
  explicit TraceLineFields(std::string_view line) : rest_(line) {}
  /// The next field as a number of type T; false when there is none or it
  /// is not one (a sign where none belongs, a fraction, out of range).
  template <typename T>
  bool number(T& out) {
    skip_spaces();
    const auto [end, ec] = std::from_chars(rest_.data(), rest_.data() + rest_.size(), out);
    const size_t used = static_cast<size_t>(end - rest_.data());
    if (ec != std::errc() || used == 0 || (used < rest_.size() && rest_[used] != ' ')) return false;
    rest_.remove_prefix(used);
    return true;
  }
  /// The next field as text (empty at the end).
  std::string_view word() {
    skip_spaces();
    const std::string_view w = rest_.substr(0, rest_.find(' '));
    rest_.remove_prefix(w.size());
    return w;
  }
  bool at_end() {
    skip_spaces();
    return rest_.empty();
  }
  size_t remaining() const { return rest_.size(); }

 private:
  void skip_spaces() {
    while (!rest_.empty() && rest_.front() == ' ') rest_.remove_prefix(1);
  }
  std::string_view rest_;
};

class TraceParser {
 public:
  TraceParser(const std::filesystem::path& file, std::string_view text,
              const std::optional<RoutingShape>& expected)
      : file_(file), lines_(text), expected_(expected) {}

  RoutingTrace parse() {
    const int version = read_version();
    read_model();
    read_shape();
    seen_.assign(static_cast<size_t>(trace_.experts), 0);
    std::string_view line;
    bool ended = false;
    while (next(line)) {
      if (version >= 2 && line.starts_with("end")) {
        read_end(line);
        ended = true;
        break;
      }
      trace_.steps.push_back(read_step(line));
    }
    if (ended && next(line)) bad("bytes after the `end` line (two traces joined?)");
    if (version >= 2 && !ended)
      bad_at_end(
          "it stops without its `end` line: the recording was cut short (the run was killed or "
          "a write failed)");
    if (version == 1)
      note(
          "{}: a version 1 trace has no end line, so a trace cut at a line boundary cannot be "
          "told from a whole one; re-record it to have it checked",
          file_.string());
    return std::move(trace_);
  }

 private:
  [[noreturn]] void bad(std::string_view what) const {
    fail("{}:{}: not a glmrt routing trace: {}", file_.string(), lines_.number(), what);
  }
  [[noreturn]] void bad_at_end(std::string_view what) const {
    fail("{}: not a whole glmrt routing trace: {}", file_.string(), what);
  }
  /// The next line; a last line without '\n' is a cut write.
  bool next(std::string_view& line) {
    if (!lines_.next(line)) return false;
    if (lines_.last_line_cut())
      bad("the line stops without its newline: the trace is cut short (a write failed or the "
          "file was truncated)");
    return true;
  }
  std::string_view required_line(std::string_view what) {
    std::string_view line;
    if (!next(line)) bad_at_end(fmt::format("it stops before {}", what));
    return line;
  }

  int read_version() {
    TraceLineFields f(required_line("its first line"));
    int version = 0;
    if (f.word() != "glmrt-routing-trace" || !f.number(version) || !f.at_end())
      bad(fmt::format("the first line is not `glmrt-routing-trace {}`", kRoutingTraceVersion));
    if (version < 1 || version > kRoutingTraceVersion)
      bad(fmt::format("version {} (this glmrt reads versions 1 to {})", version,
                      kRoutingTraceVersion));
    return version;
  }

  void read_model() {
    TraceLineFields f(required_line("its model line"));
    if (f.word() != "model") bad("expected `model <id>`");
    trace_.model_id = std::string(f.word());
    if (trace_.model_id.empty() || !f.at_end()) bad("expected `model <id>` (one word)");
    if (printable(trace_.model_id) != trace_.model_id)
      bad(fmt::format("the model id `{}` holds control characters",
                      printable(trace_.model_id, 80)));
  }

  void read_shape() {
    TraceLineFields f(required_line("its shape line"));
    RoutingShape& s = shape_;
    if (f.word() != "shape" || !f.number(s.layers) || !f.number(s.experts) || !f.number(s.top_k) ||
        !f.at_end() || s.layers <= 0 || s.experts <= 0 || s.top_k <= 0)
      bad("expected `shape <layers> <experts> <experts per token>` (positive integers)");
    if (s.layers > kMaxTraceLayers || s.experts > kMaxTraceExperts ||
        int64_t{s.layers} * s.experts > kMaxTraceCells)
      bad(fmt::format(
          "shape {} x {} is larger than any model's (at most {} layers, {} experts, {} layer x "
          "expert cells)",
          s.layers, s.experts, kMaxTraceLayers, kMaxTraceExperts, kMaxTraceCells));
    if (s.top_k > s.experts)
      bad(fmt::format("{} experts per token, but only {} experts", s.top_k, s.experts));
    if (expected_ && s != *expected_)
      bad(fmt::format(
          "shape {} x {}, top-{} is not the model's {} x {}, top-{} (recorded on another model?)",
          s.layers, s.experts, s.top_k, expected_->layers, expected_->experts, expected_->top_k));
    trace_.layers = s.layers;
    trace_.experts = s.experts;
    trace_.top_k = s.top_k;
  }

  RoutingStep read_step(std::string_view line) {
    TraceLineFields f(line);
    RoutingStep step;
    if (!f.number(step.layer) || !f.number(step.positions) || step.layer < 0 ||
        step.layer >= shape_.layers || step.positions <= 0)
      bad(fmt::format(
          "a step line must start with a layer (0 to {}) and a positive position count, found "
          "`{}`",
          shape_.layers - 1, printable(line, 80)));
    // Each id takes two bytes at least (" 7"): a count the line cannot hold
    // is refused before anything is reserved for it.
    const int64_t most = static_cast<int64_t>(f.remaining() / 2);
    if (step.positions > most / shape_.top_k)
      bad(fmt::format("{} positions x {} experts, but the line holds at most {} ids",
                      step.positions, shape_.top_k, most));
    const int64_t n = step.positions * shape_.top_k;
    step.experts.reserve(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      int32_t id = -1;
      if (f.at_end())
        bad(fmt::format("{} expert ids, expected {} ({} positions x {})", i, n, step.positions,
                        shape_.top_k));
      if (!f.number(id)) bad(fmt::format("`{}` is not an expert id", printable(f.word(), 40)));
      if (id < 0 || id >= shape_.experts)
        bad(fmt::format("expert {} out of range (0 to {})", id, shape_.experts - 1));
      // One stamp per position: an id met twice under the same stamp repeats.
      // (A trace's at most 2^27 positions never wrap the stamp.)
      if (i % shape_.top_k == 0) ++position_stamp_;
      uint32_t& seen = seen_[static_cast<size_t>(id)];
      if (seen == position_stamp_)
        bad(fmt::format("expert {} is chosen twice for position {} of the step", id,
                        i / shape_.top_k));
      seen = position_stamp_;
      step.experts.push_back(id);
    }
    if (!f.at_end())
      bad(fmt::format("`{}` after the {} expert ids ({} positions x {})", printable(f.word(), 40),
                      n, step.positions, shape_.top_k));
    return step;
  }

  void read_end(std::string_view line) {
    TraceLineFields f(line);
    int64_t steps = -1;
    if (f.word() != "end" || !f.number(steps) || !f.at_end()) bad("expected `end <steps>`");
    if (steps != static_cast<int64_t>(trace_.steps.size()))
      bad(fmt::format("the end line counts {} steps, the trace holds {} (lines lost or added)",
                      steps, trace_.steps.size()));
  }

  const std::filesystem::path& file_;
  InputLines lines_;
  std::optional<RoutingShape> expected_;
  RoutingShape shape_;
  RoutingTrace trace_;
  std::vector<uint32_t> seen_;  // per expert: the stamp of the position it was last seen in
  uint32_t position_stamp_ = 0;
};

}  // namespace

RoutingTrace read_routing_trace(const std::filesystem::path& file,
                                const std::optional<RoutingShape>& expected) {
  const std::string text = read_input_file(file, InputKind{"the routing trace", kMaxTraceBytes});
  return TraceParser(file, text, expected).parse();
}

}  // namespace glmrt
