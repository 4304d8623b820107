// The functions transformers puts in a chat template's globals.
#include <ctime>

#include "jinja_evaluator.h"

namespace glmrt::text::jinja {
namespace {

// range() never builds more items than this: a bigger one is a hostile
// template, not a chat.
constexpr std::int64_t kMaxRangeLength = 10'000'000;

Value range_global(Evaluator&, CallArguments& args) {
  if (args.positional.empty() || args.positional.size() > 3)
    problem("range expected 1 to 3 integer arguments, got {}", args.positional.size());
  std::int64_t start = 0, stop = 0, step = 1;
  if (args.positional.size() == 1) {
    stop = require_integer(args.positional[0], "range()'s argument");
  } else {
    start = require_integer(args.positional[0], "range()'s start");
    stop = require_integer(args.positional[1], "range()'s stop");
    if (args.positional.size() == 3) step = require_integer(args.positional[2], "range()'s step");
  }
  if (step == 0) problem("range() arg 3 must not be zero");
  const __int128 span = step > 0 ? __int128{stop} - start : __int128{start} - stop;
  const __int128 stride = step > 0 ? __int128{step} : -__int128{step};
  const __int128 count = span > 0 ? (span + stride - 1) / stride : 0;
  if (count > kMaxRangeLength)
    problem("range() of more than {} items exceeds the bound", kMaxRangeLength);
  std::vector<Value> items;
  items.reserve(static_cast<std::size_t>(count));
  for (__int128 i = 0, v = start; i < count; ++i, v += step)
    items.emplace_back(static_cast<std::int64_t>(v));
  return Value::list(std::move(items));
}

Dict dict_from(const CallArguments& args, std::string_view what) {
  Dict d;
  if (args.positional.size() > 1) problem("{} takes at most one positional argument", what);
  if (!args.positional.empty()) {
    if (!args.positional[0].is<DictPtr>())
      problem("{}'s positional argument must be a dict, not '{}'", what,
              python_type_name(args.positional[0]));
    d = *args.positional[0].as<DictPtr>();
  }
  for (const auto& [k, v] : args.keyword) d.set(k, v);
  return d;
}

Value strftime_now_global(Evaluator&, CallArguments& args) {
  const std::string format = require_string(args.take(0, "format"), "strftime_now's format").text;
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  std::string out(256 + format.size() * 8, '\0');
  const std::size_t n = std::strftime(out.data(), out.size(), format.c_str(), &local);
  out.resize(n);
  return out;
}

}  // namespace

Dict chat_template_globals() {
  Dict globals;
  auto add = [&](std::string name, Function f) {
    globals.set(name, std::make_shared<Callable>(Callable{name, std::move(f)}));
  };
  add("range", range_global);
  add("namespace", [](Evaluator&, CallArguments& args) -> Value {
    return std::make_shared<Namespace>(Namespace{dict_from(args, "namespace()")});
  });
  add("dict", [](Evaluator&, CallArguments& args) -> Value {
    return Value::dict(dict_from(args, "dict()"));
  });
  add("raise_exception", [](Evaluator&, CallArguments& args) -> Value {
    problem("the template raised an error: {}", to_text(args.take(0, "message")).text);
  });
  add("strftime_now", strftime_now_global);
  return globals;
}

}  // namespace glmrt::text::jinja
