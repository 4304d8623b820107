// The methods of str, dict and list that templates call, with Python's
// semantics (split with maxsplit, strip with a set of characters, ...).
#include <unicode/uchar.h>

#include <charconv>

#include "jinja_ops.h"
#include "jinja_text_case.h"
#include "utf8.h"

namespace glmrt::text::jinja {
namespace {

using Args = const CallArguments&;

bool python_space_code_point(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

// str.strip / lstrip / rstrip: `chars` None strips white space.
Value strip_method(const MarkedText& s, const Value& chars, bool left, bool right) {
  std::u32string set;
  if (!chars.is_undefined() && !chars.is_none()) {
    const std::string& c = require_string(chars, "the argument of strip()").text;
    for (std::size_t pos = 0; pos < c.size();) {
      const auto [cp, length] = utf8::decode_at(c, pos);
      set.push_back(cp);
      pos += length;
    }
  }
  auto strippable = [&](char32_t cp) {
    return chars.is_undefined() || chars.is_none() ? python_space_code_point(cp)
                                                   : set.find(cp) != std::u32string::npos;
  };
  const std::vector<std::size_t> offsets = code_point_offsets(s.text);
  std::size_t begin = 0, end = offsets.size() - 1;
  while (left && begin < end && strippable(utf8::decode_at(s.text, offsets[begin]).code_point))
    ++begin;
  while (right && end > begin && strippable(utf8::decode_at(s.text, offsets[end - 1]).code_point))
    --end;
  return s.slice(offsets[begin], offsets[end]);
}

// str.split / rsplit. No separator: runs of white space, empty ends dropped.
Value split_method(const MarkedText& s, Args args, bool from_right) {
  const Value sep_v = args.take(0, "sep");
  const Value max_v = args.take(1, "maxsplit");
  std::int64_t maxsplit = max_v.is_undefined() ? -1 : require_integer(max_v, "maxsplit");
  std::vector<std::pair<std::size_t, std::size_t>> parts;  // byte ranges
  if (sep_v.is_undefined() || sep_v.is_none()) {
    const std::vector<std::size_t> offsets = code_point_offsets(s.text);
    auto space_at = [&](std::size_t i) {
      return python_space_code_point(utf8::decode_at(s.text, offsets[i]).code_point);
    };
    const std::size_t n = offsets.size() - 1;
    if (!from_right) {
      std::size_t i = 0;
      while (i < n) {
        while (i < n && space_at(i)) ++i;
        if (i == n) break;
        if (maxsplit == 0) {  // the rest, trailing white space included
          parts.emplace_back(offsets[i], offsets[n]);
          break;
        }
        const std::size_t start = i;
        while (i < n && !space_at(i)) ++i;
        parts.emplace_back(offsets[start], offsets[i]);
        --maxsplit;
      }
    } else {
      std::size_t i = n;
      while (i > 0) {
        while (i > 0 && space_at(i - 1)) --i;
        if (i == 0) break;
        if (maxsplit == 0) {  // the rest, leading white space included
          parts.emplace_back(offsets[0], offsets[i]);
          break;
        }
        const std::size_t end = i;
        while (i > 0 && !space_at(i - 1)) --i;
        parts.emplace_back(offsets[i], offsets[end]);
        --maxsplit;
      }
      std::reverse(parts.begin(), parts.end());
    }
  } else {
    const std::string& sep = require_string(sep_v, "the separator of split()").text;
    if (sep.empty()) problem("empty separator");
    if (!from_right) {
      std::size_t start = 0;
      for (std::size_t at; maxsplit != 0 && (at = s.text.find(sep, start)) != std::string::npos;
           --maxsplit) {
        parts.emplace_back(start, at);
        start = at + sep.size();
      }
      parts.emplace_back(start, s.text.size());
    } else {
      std::size_t end = s.text.size();
      while (maxsplit != 0 && end >= sep.size()) {
        const std::size_t at = s.text.rfind(sep, end - sep.size());
        if (at == std::string::npos) break;
        parts.emplace_back(at + sep.size(), end);
        end = at;
        --maxsplit;
      }
      parts.emplace_back(0, end);
      std::reverse(parts.begin(), parts.end());
    }
  }
  std::vector<Value> out;
  for (const auto& [b, e] : parts) out.emplace_back(s.slice(b, e));
  return Value::list(std::move(out));
}

bool affix_matches(const MarkedText& s, const Value& affix, bool at_start) {
  auto one = [&](const Value& a) {
    const std::string& t =
        require_string(a, at_start ? "startswith()'s argument" : "endswith()'s argument").text;
    return at_start ? s.text.starts_with(t) : s.text.ends_with(t);
  };
  if (affix.is<ListPtr>()) {
    for (const Value& a : *affix.as<ListPtr>())
      if (one(a)) return true;
    return false;
  }
  return one(affix);
}

std::int64_t code_point_index_of_byte(const std::string& text, std::size_t byte) {
  return static_cast<std::int64_t>(code_point_offsets(text.substr(0, byte)).size()) - 1;
}

Value replace_text(const MarkedText& s, Args args) {
  const std::string old_text = require_string(args.take(0, "old"), "replace()'s old").text;
  const MarkedText new_text = require_string(args.take(1, "new"), "replace()'s new");
  const Value count_v = args.take(2, "count");
  std::int64_t count = count_v.is_undefined() ? -1 : require_integer(count_v, "replace()'s count");
  MarkedText out;
  std::size_t pos = 0;
  if (old_text.empty()) problem("replace() with an empty pattern is not supported");
  for (std::size_t at; count != 0 && (at = s.text.find(old_text, pos)) != std::string::npos;
       --count) {
    out.append(s.slice(pos, at));
    out.append(new_text);
    pos = at + old_text.size();
    if (out.text.size() > kMaxBuiltValueBytes) problem("replace() builds a value too large");
  }
  out.append(s.slice(pos, s.text.size()));
  return out;
}

// str.format with `{}` / `{0}` / `{name}` fields (no format specs).
Value format_text(const MarkedText& s, Args args) {
  MarkedText out;
  std::size_t auto_index = 0;
  for (std::size_t i = 0; i < s.text.size(); ++i) {
    const char c = s.text[i];
    if ((c == '{' || c == '}') && i + 1 < s.text.size() && s.text[i + 1] == c) {
      out.append(std::string_view(&c, 1));
      ++i;
      continue;
    }
    if (c == '}') problem("Single '}}' encountered in format string");
    if (c != '{') {
      out.append(s.slice(i, i + 1));
      continue;
    }
    const std::size_t close = s.text.find('}', i);
    if (close == std::string::npos) problem("Single '{{' encountered in format string");
    const std::string field = s.text.substr(i + 1, close - i - 1);
    Value v;
    if (field.empty()) {
      v = args.take(auto_index++, "");
    } else if (std::all_of(field.begin(), field.end(), ::isdigit)) {
      std::size_t index = SIZE_MAX;
      std::from_chars(field.data(), field.data() + field.size(), index);
      v = args.take(index, "");
    } else {
      v = args.take(SIZE_MAX, field);
    }
    if (v.is_undefined()) problem("format(): no argument for field {{{}}}", field);
    out.append(to_text(v));
    i = close;
  }
  return out;
}

}  // namespace

Value string_method(const MarkedText& s, std::string_view name, const CallArguments& args) {
  if (name == "strip") return strip_method(s, args.take(0, "chars"), true, true);
  if (name == "lstrip") return strip_method(s, args.take(0, "chars"), true, false);
  if (name == "rstrip") return strip_method(s, args.take(0, "chars"), false, true);
  if (name == "split") return split_method(s, args, false);
  if (name == "rsplit") return split_method(s, args, true);
  if (name == "startswith") return affix_matches(s, args.take(0, "prefix"), true);
  if (name == "endswith") return affix_matches(s, args.take(0, "suffix"), false);
  if (name == "upper" || name == "lower" || name == "title" || name == "capitalize")
    return change_case(s, name);
  if (name == "replace") return replace_text(s, args);
  if (name == "format") return format_text(s, args);
  if (name == "find" || name == "rfind" || name == "index" || name == "count") {
    const std::string sub = require_string(args.take(0, "sub"), "the argument").text;
    if (name == "count") {
      if (sub.empty()) return length_of(s) + 1;
      std::int64_t n = 0;
      for (std::size_t at = s.text.find(sub); at != std::string::npos;
           at = s.text.find(sub, at + sub.size()))
        ++n;
      return n;
    }
    const std::size_t at = name == "rfind" ? s.text.rfind(sub) : s.text.find(sub);
    if (at == std::string::npos) {
      if (name == "index") problem("substring not found");
      return std::int64_t{-1};
    }
    return code_point_index_of_byte(s.text, at);
  }
  if (name == "join") {
    MarkedText out;
    bool first = true;
    for (const Value& item : iterate(args.take(0, "iterable"))) {
      if (!first) out.append(s);
      first = false;
      out.append(require_string(item, "join()'s items"));
    }
    return out;
  }
  if (name == "isdigit" || name == "isalpha" || name == "isspace" || name == "isalnum") {
    if (s.text.empty()) return false;
    for (std::size_t pos = 0; pos < s.text.size();) {
      const auto [cp, length] = utf8::decode_at(s.text, pos);
      pos += length;
      const bool ok = name == "isdigit"   ? u_isdigit(static_cast<UChar32>(cp)) != 0
                      : name == "isalpha" ? u_isalpha(static_cast<UChar32>(cp)) != 0
                      : name == "isspace" ? python_space_code_point(cp)
                                          : u_isalnum(static_cast<UChar32>(cp)) != 0;
      if (!ok) return false;
    }
    return true;
  }
  if (name == "splitlines") {
    std::vector<Value> lines;
    std::size_t start = 0;
    for (std::size_t i = 0; i < s.text.size(); ++i)
      if (s.text[i] == '\n') lines.emplace_back(s.slice(start, i)), start = i + 1;
    if (start < s.text.size()) lines.emplace_back(s.slice(start, s.text.size()));
    return Value::list(std::move(lines));
  }
  problem("str has no method '{}'", name);
}

namespace {

Value dict_method(const DictPtr& d, std::string_view name, Args args) {
  if (name == "get") {
    const Value key = args.take(0, "key");
    if (key.is_string())
      if (const Value* v = d->find(key.text())) return *v;
    return args.has(1, "default") ? args.take(1, "default") : Value(None{});
  }
  if (name == "items") {
    std::vector<Value> out;
    for (const auto& [k, v] : d->items) out.push_back(Value::list({Value(k), v}));
    return Value::list(std::move(out));
  }
  if (name == "keys") return Value::list(iterate(Value(d)));
  if (name == "values") {
    std::vector<Value> out;
    for (const auto& [k, v] : d->items) out.push_back(v);
    return Value::list(std::move(out));
  }
  problem("dict has no method '{}'", name);
}

Value list_method(const ListPtr& l, std::string_view name, Args args) {
  if (name == "append") {
    if (l->size() * sizeof(Value) >= kMaxBuiltValueBytes)
      problem("append() builds a list too large");
    Value item = args.take(0, "object");
    if (holds(item, l.get()))
      problem("append() would put the list inside itself (a reference cycle)");
    l->push_back(std::move(item));
    return None{};
  }
  if (name == "index" || name == "count") {
    const Value item = args.take(0, "value");
    std::int64_t n = 0;
    for (std::size_t i = 0; i < l->size(); ++i)
      if (equal((*l)[i], item)) {
        if (name == "index") return static_cast<std::int64_t>(i);
        ++n;
      }
    if (name == "index") problem("the value is not in the list");
    return n;
  }
  problem("list has no method '{}'", name);
}

bool string_method_named(std::string_view n) {
  for (std::string_view m :
       {"strip", "lstrip", "rstrip",     "split",   "rsplit",  "startswith", "endswith",  "upper",
        "lower", "title",  "capitalize", "replace", "format",  "find",       "rfind",     "index",
        "count", "join",   "isdigit",    "isalpha", "isspace", "isalnum",    "splitlines"})
    if (n == m) return true;
  return false;
}

}  // namespace

std::optional<Value> method_of(const Value& receiver, std::string_view name) {
  Function function;
  if (receiver.is_string() && string_method_named(name)) {
    const MarkedText s = receiver.as<MarkedText>();
    function = [s, n = std::string(name)](Evaluator&, CallArguments& a) {
      return string_method(s, n, a);
    };
  } else if (receiver.is<DictPtr>() &&
             (name == "get" || name == "items" || name == "keys" || name == "values")) {
    function = [d = receiver.as<DictPtr>(), n = std::string(name)](Evaluator&, CallArguments& a) {
      return dict_method(d, n, a);
    };
  } else if (receiver.is<ListPtr>() && (name == "append" || name == "index" || name == "count")) {
    function = [l = receiver.as<ListPtr>(), n = std::string(name)](Evaluator&, CallArguments& a) {
      return list_method(l, n, a);
    };
  } else {
    return std::nullopt;
  }
  // A list's or dict's method holds it: holds() must see through the method.
  const Value bound = receiver.is_string() ? Value() : receiver;
  return Value(std::make_shared<Callable>(Callable{std::string(name), std::move(function), bound}));
}

}  // namespace glmrt::text::jinja
