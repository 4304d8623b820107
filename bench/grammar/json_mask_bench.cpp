// The cost of one token mask (response_format) per decode step:
//   build/bench/grammar/bench_json_mask [tokenizer.json] [--vocab N] [--reps R]
// builds the vocabulary's trie (timed), tokenizes a typical answer, and at
// every prefix of it computes the mask R times (default 5), printing the
// median per step over all steps and the medians per kind of state (inside
// a string, where nearly every token is allowed, is the dear one).
// Default tokenizer: tests/fixtures/tokenizer/qwen3 (151,669 tokens, the
// size of GLM-5's 154,880); --vocab pads the logits to N ids.
#include <glmrt/grammar/json_constraint.h>
#include <glmrt/text/tokenizer.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace {

using namespace glmrt;
using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

constexpr const char* kSchema = R"({
  "type": "object",
  "properties": {
    "name": {"type": "string", "maxLength": 40},
    "age": {"type": "integer", "minimum": 0, "maximum": 120},
    "rating": {"type": "number", "minimum": 0, "maximum": 5},
    "member": {"type": "boolean"},
    "tags": {"type": "array", "items": {"enum": ["new", "vip", "late"]}, "maxItems": 3},
    "notes": {"type": "string", "maxLength": 400}
  },
  "required": ["name", "age", "rating", "member", "tags", "notes"],
  "additionalProperties": false})";

constexpr const char* kAnswer =
    R"({"name": "Ada Lovelace", "age": 36, "rating": 4.75, "member": true, "tags": ["vip", "new"], )"
    R"("notes": "Wrote the first published program, for Babbage's Analytical Engine, in 1843; )"
    R"(she also saw that it could compose music."})";

// What the state after `prefix` is inside, for the per-kind medians.
std::string kind_of(const std::string& prefix) {
  bool in_string = false, escaped = false;
  char last = 0;
  for (char c : prefix) {
    if (in_string) {
      if (escaped)
        escaped = false;
      else if (c == '\\')
        escaped = true;
      else if (c == '"')
        in_string = false;
    } else if (c == '"') {
      in_string = true;
    }
    if (c != ' ') last = c;
  }
  if (in_string) {
    // A key's opening quote follows `{` or `,` (spaces aside).
    const size_t open = prefix.rfind('"');
    const size_t before = open == 0 ? std::string::npos : prefix.find_last_not_of(" \n", open - 1);
    const bool key =
        before != std::string::npos && (prefix[before] == '{' || prefix[before] == ',');
    return key ? "key" : "string value";
  }
  if (last >= '0' && last <= '9') return "number";
  return "between tokens";
}

}  // namespace

int main(int argc, char** argv) {
  std::string path = std::string(GLMRT_FIXTURES) + "/tokenizer/qwen3/tokenizer.json";
  size_t vocab = 0;
  int reps = 5;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--vocab" && i + 1 < argc)
      vocab = std::stoul(argv[++i]);
    else if (a == "--reps" && i + 1 < argc)
      reps = std::stoi(argv[++i]);
    else
      path = a;
  }
  try {
    const auto tokenizer = text::Tokenizer::from_file(path);
    if (vocab == 0) vocab = tokenizer.vocab_size();
    auto t0 = Clock::now();
    const auto trie = std::make_shared<const grammar::TokenTrie>(
        grammar::TokenTrie::from_tokenizer(tokenizer, vocab));
    const double build_ms = ms_since(t0);
    const auto schema = std::make_shared<const grammar::JsonSchema>(
        grammar::JsonSchema::compile(grammar::Json::parse(kSchema)));
    const auto ids = tokenizer.encode(kAnswer);
    std::vector<int32_t> answer(ids.begin(), ids.end());
    std::vector<double> all;
    std::map<std::string, std::vector<double>> by_kind;
    std::vector<size_t> allowed_counts;
    std::string prefix;
    size_t nodes = 0;
    for (size_t n = 0; n < answer.size(); ++n) {
      std::vector<double> times;
      for (int r = 0; r < reps; ++r) {
        // A fresh constraint each time, its states advanced first: only the
        // mask is timed, never one served from its cache.
        grammar::JsonConstraint timed(schema, trie, {0});
        (void)timed.complete(std::span(answer).first(n));
        t0 = Clock::now();
        const auto mask = timed.allowed(std::span(answer).first(n));
        times.push_back(ms_since(t0));
        if (r == 0) {
          allowed_counts.push_back(static_cast<size_t>(std::count(mask.begin(), mask.end(), 1)));
          nodes = std::max(nodes, timed.last_walk_nodes());
        }
      }
      const double m = median(times);
      all.push_back(m);
      by_kind[kind_of(prefix)].push_back(m);
      prefix += *trie->bytes(answer[n]);
    }
    fmt::print("tokenizer {}: vocab {} (trie of {} nodes built in {:.0f} ms)\n", path, vocab,
               trie->nodes().size(), build_ms);
    fmt::print(
        "answer of {} tokens, {} reps per step: mask per step median {:.3f} ms, max {:.3f} ms\n",
        answer.size(), reps, median(all), *std::max_element(all.begin(), all.end()));
    for (const auto& [kind, times] : by_kind)
      fmt::print("  {:>15}: {:3} steps, median {:.3f} ms, max {:.3f} ms\n", kind, times.size(),
                 median(times), *std::max_element(times.begin(), times.end()));
    fmt::print("most trie nodes stepped in one walk: {}; allowed tokens per step: median {}\n",
               nodes, [&] {
                 auto c = allowed_counts;
                 std::sort(c.begin(), c.end());
                 return c[c.size() / 2];
               }());
  } catch (const std::exception& e) {
    fmt::print(stderr, "bench_json_mask: {}\n", e.what());
    return 1;
  }
  return 0;
}
