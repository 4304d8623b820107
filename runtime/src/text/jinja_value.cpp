#include "jinja_value.h"

#include <glmrt/base/error.h>

#include <fmt/format.h>

#include <cmath>
#include <unordered_set>
#include <vector>

#include "utf8.h"

namespace glmrt::text::jinja {

void MarkedText::append(const MarkedText& other) {
  const std::size_t shift = text.size();
  text += other.text;
  for (const ByteRange& r : other.marks) {
    if (!marks.empty() && marks.back().end == r.begin + shift)
      marks.back().end = r.end + shift;
    else
      marks.push_back({r.begin + shift, r.end + shift});
  }
}

MarkedText MarkedText::slice(std::size_t begin, std::size_t end) const {
  MarkedText out{text.substr(begin, end - begin), {}};
  for (const ByteRange& r : marks) {
    const std::size_t b = std::max(r.begin, begin), e = std::min(r.end, end);
    if (b < e) out.marks.push_back({b - begin, e - begin});
  }
  return out;
}

void MarkedText::mark_all_if_any() {
  if (marks.empty()) return;
  marks.assign(1, ByteRange{0, text.size()});
  if (text.empty()) marks.clear();
}

const Value* Dict::find(std::string_view key) const {
  for (const auto& [k, v] : items)
    if (k == key) return &v;
  return nullptr;
}

Value* Dict::find(std::string_view key) {
  for (auto& [k, v] : items)
    if (k == key) return &v;
  return nullptr;
}

void Dict::set(std::string_view key, Value value) {
  if (Value* existing = find(key))
    *existing = std::move(value);
  else
    items.emplace_back(std::string(key), std::move(value));
}

Value CallArguments::take(std::size_t index, std::string_view name) const {
  if (index < positional.size()) return positional[index];
  for (const auto& [k, v] : keyword)
    if (k == name) return v;
  return Undefined{std::string(name)};
}

bool CallArguments::has(std::size_t index, std::string_view name) const {
  if (index < positional.size()) return true;
  for (const auto& [k, v] : keyword)
    if (k == name) return true;
  return false;
}

std::string python_type_name(const Value& value) {
  struct Namer {
    std::string operator()(const Undefined&) const { return "Undefined"; }
    std::string operator()(const None&) const { return "NoneType"; }
    std::string operator()(bool) const { return "bool"; }
    std::string operator()(std::int64_t) const { return "int"; }
    std::string operator()(double) const { return "float"; }
    std::string operator()(const MarkedText&) const { return "str"; }
    std::string operator()(const ListPtr&) const { return "list"; }
    std::string operator()(const DictPtr&) const { return "dict"; }
    std::string operator()(const NamespacePtr&) const { return "Namespace"; }
    std::string operator()(const CallablePtr&) const { return "function"; }
  };
  return std::visit(Namer{}, value.storage());
}

bool truthy(const Value& value) {
  struct Truth {
    bool operator()(const Undefined&) const { return false; }
    bool operator()(const None&) const { return false; }
    bool operator()(bool b) const { return b; }
    bool operator()(std::int64_t i) const { return i != 0; }
    bool operator()(double d) const { return d != 0.0; }
    bool operator()(const MarkedText& s) const { return !s.text.empty(); }
    bool operator()(const ListPtr& l) const { return !l->empty(); }
    bool operator()(const DictPtr& d) const { return !d->items.empty(); }
    bool operator()(const NamespacePtr&) const { return true; }
    bool operator()(const CallablePtr&) const { return true; }
  };
  return std::visit(Truth{}, value.storage());
}

namespace {

std::string python_float_repr(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  return nlohmann::json(d).dump();
}

void append_python_string_repr(std::string& out, std::string_view text) {
  const bool use_double =
      text.find('\'') != std::string_view::npos && text.find('"') == std::string_view::npos;
  const char quote = use_double ? '"' : '\'';
  out.push_back(quote);
  for (std::size_t pos = 0; pos < text.size();) {
    const auto [cp, length] = utf8::decode_at(text, pos);
    const std::string_view raw = text.substr(pos, length);
    pos += length;
    if (cp == static_cast<char32_t>(quote) || cp == '\\') {
      out.push_back('\\');
      out.append(raw);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD) {
      out += fmt::format("\\x{:02x}", static_cast<unsigned>(cp));
    } else {
      out.append(raw);
    }
  }
  out.push_back(quote);
}

constexpr int kMaxReprDepth = 128;

void append_repr(MarkedText& out, const Value& value, int depth);

void append_item_repr(MarkedText& out, const Value& item, int depth) {
  if (item.is_string()) {
    MarkedText quoted;
    append_python_string_repr(quoted.text, item.text());
    if (item.as<MarkedText>().has_marks()) quoted.marks.push_back({0, quoted.text.size()});
    out.append(quoted);
  } else {
    append_repr(out, item, depth + 1);
  }
}

void append_repr(MarkedText& out, const Value& value, int depth) {
  if (depth > kMaxReprDepth) fail("cannot print a value nested more than {} levels", depth);
  if (value.is<ListPtr>()) {
    out.append("[");
    bool first = true;
    for (const Value& item : *value.as<ListPtr>()) {
      if (!first) out.append(", ");
      first = false;
      append_item_repr(out, item, depth);
    }
    out.append("]");
  } else if (value.is<DictPtr>()) {
    out.append("{");
    bool first = true;
    for (const auto& [key, item] : value.as<DictPtr>()->items) {
      if (!first) out.append(", ");
      first = false;
      append_python_string_repr(out.text, key);
      out.append(": ");
      append_item_repr(out, item, depth);
    }
    out.append("}");
  } else {
    out.append(to_text(value));
  }
}

}  // namespace

MarkedText to_text(const Value& value) {
  struct Printer {
    MarkedText operator()(const Undefined&) const { return {}; }
    MarkedText operator()(const None&) const { return {"None", {}}; }
    MarkedText operator()(bool b) const { return {b ? "True" : "False", {}}; }
    MarkedText operator()(std::int64_t i) const { return {std::to_string(i), {}}; }
    MarkedText operator()(double d) const { return {python_float_repr(d), {}}; }
    MarkedText operator()(const MarkedText& s) const { return s; }
    MarkedText operator()(const NamespacePtr&) const { return {"<Namespace>", {}}; }
    MarkedText operator()(const CallablePtr& c) const {
      return {fmt::format("<function {}>", c->name), {}};
    }
    MarkedText operator()(const ListPtr&) const { return {}; }
    MarkedText operator()(const DictPtr&) const { return {}; }
  };
  if (value.is<ListPtr>() || value.is<DictPtr>()) {
    MarkedText out;
    append_repr(out, value, 0);
    return out;
  }
  return std::visit(Printer{}, value.storage());
}

namespace {

bool numeric_pair(const Value& a, const Value& b, double& x, double& y) {
  auto number = [](const Value& v, double& out) {
    if (v.is<bool>()) return out = v.as<bool>() ? 1 : 0, true;
    if (v.is<std::int64_t>()) return out = static_cast<double>(v.as<std::int64_t>()), true;
    if (v.is<double>()) return out = v.as<double>(), true;
    return false;
  };
  return number(a, x) && number(b, y);
}

}  // namespace

bool equal(const Value& a, const Value& b) {
  if (a.is<std::int64_t>() && b.is<std::int64_t>())
    return a.as<std::int64_t>() == b.as<std::int64_t>();
  double x = 0, y = 0;
  if (numeric_pair(a, b, x, y)) return x == y;
  if (a.is_string() && b.is_string()) return a.text() == b.text();
  if (a.is_none() && b.is_none()) return true;
  if (a.is_undefined() && b.is_undefined()) return true;
  if (a.is<ListPtr>() && b.is<ListPtr>()) {
    const auto &l = *a.as<ListPtr>(), &r = *b.as<ListPtr>();
    if (l.size() != r.size()) return false;
    for (std::size_t i = 0; i < l.size(); ++i)
      if (!equal(l[i], r[i])) return false;
    return true;
  }
  if (a.is<DictPtr>() && b.is<DictPtr>()) {
    const Dict &l = *a.as<DictPtr>(), &r = *b.as<DictPtr>();
    if (l.items.size() != r.items.size()) return false;
    for (const auto& [k, v] : l.items) {
      const Value* other = r.find(k);
      if (!other || !equal(v, *other)) return false;
    }
    return true;
  }
  if (a.is<NamespacePtr>() && b.is<NamespacePtr>())
    return a.as<NamespacePtr>() == b.as<NamespacePtr>();
  if (a.is<CallablePtr>() && b.is<CallablePtr>()) return a.as<CallablePtr>() == b.as<CallablePtr>();
  return false;
}

Value from_json(const nlohmann::ordered_json& json, bool marked) {
  switch (json.type()) {
    case nlohmann::ordered_json::value_t::null:
      return None{};
    case nlohmann::ordered_json::value_t::boolean:
      return json.get<bool>();
    case nlohmann::ordered_json::value_t::number_integer:
      return json.get<std::int64_t>();
    case nlohmann::ordered_json::value_t::number_unsigned: {
      const std::uint64_t u = json.get<std::uint64_t>();
      if (u > static_cast<std::uint64_t>(INT64_MAX)) return static_cast<double>(u);
      return static_cast<std::int64_t>(u);
    }
    case nlohmann::ordered_json::value_t::number_float:
      return json.get<double>();
    case nlohmann::ordered_json::value_t::string: {
      MarkedText s{json.get<std::string>(), {}};
      if (marked && !s.text.empty()) s.marks.push_back({0, s.text.size()});
      return s;
    }
    case nlohmann::ordered_json::value_t::array: {
      std::vector<Value> items;
      items.reserve(json.size());
      for (const auto& item : json) items.push_back(from_json(item, marked));
      return Value::list(std::move(items));
    }
    case nlohmann::ordered_json::value_t::object: {
      Dict d;
      d.items.reserve(json.size());
      // A message's `role` is the template's to spell: some build the role
      // token around it ('<|' + role + '|>'), which must stay a token.
      for (const auto& [k, v] : json.items())
        d.items.emplace_back(k, from_json(v, marked && k != "role"));
      return Value::dict(std::move(d));
    }
    default:
      return Undefined{};
  }
}

bool carries_marks(const Value& value) {
  if (value.is_string()) return value.as<MarkedText>().has_marks();
  if (value.is<ListPtr>())
    for (const Value& item : *value.as<ListPtr>())
      if (carries_marks(item)) return true;
  if (value.is<DictPtr>())
    for (const auto& [k, item] : value.as<DictPtr>()->items)
      if (carries_marks(item)) return true;
  return false;
}

bool holds(const Value& value, const void* container) {
  // Iterative, and each container once: shared sublists would otherwise be
  // walked once per path to them.
  std::vector<const Value*> pending{&value};
  std::unordered_set<const void*> seen;
  while (!pending.empty()) {
    const Value& v = *pending.back();
    pending.pop_back();
    if (v.is<CallablePtr>()) {
      pending.push_back(&v.as<CallablePtr>()->bound);
      continue;
    }
    const std::vector<Value>* list = v.is<ListPtr>() ? v.as<ListPtr>().get() : nullptr;
    const Dict* dict = v.is<DictPtr>()        ? v.as<DictPtr>().get()
                       : v.is<NamespacePtr>() ? &v.as<NamespacePtr>()->attributes
                                              : nullptr;
    const void* at = v.is<NamespacePtr>() ? static_cast<const void*>(v.as<NamespacePtr>().get())
                     : list               ? static_cast<const void*>(list)
                                          : static_cast<const void*>(dict);
    if (at == nullptr) continue;
    if (at == container) return true;
    if (!seen.insert(at).second) continue;
    if (list)
      for (const Value& item : *list) pending.push_back(&item);
    else
      for (const auto& [key, item] : dict->items) pending.push_back(&item);
  }
  return false;
}

std::vector<std::size_t> code_point_offsets(std::string_view text) {
  std::vector<std::size_t> offsets;
  offsets.reserve(text.size() + 1);
  for (std::size_t pos = 0; pos < text.size();) {
    offsets.push_back(pos);
    const std::size_t length = utf8::sequence_length(static_cast<unsigned char>(text[pos]));
    pos += length == 0 ? 1 : length;
  }
  offsets.push_back(text.size());
  return offsets;
}

}  // namespace glmrt::text::jinja
