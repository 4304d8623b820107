// Python's json.dumps as transformers' `tojson` filter calls it.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "jinja_ops.h"
#include "utf8.h"

namespace glmrt::text::jinja {
namespace {

constexpr int kMaxJsonDumpDepth = 128;

void append_json_text(std::string& out, std::string_view text, bool ensure_ascii) {
  out.push_back('"');
  for (std::size_t pos = 0; pos < text.size();) {
    const auto [cp, length] = utf8::decode_at(text, pos);
    const std::string_view raw = text.substr(pos, length);
    pos += length;
    switch (cp) {
      case '"':
        out += "\\\"";
        continue;
      case '\\':
        out += "\\\\";
        continue;
      case '\n':
        out += "\\n";
        continue;
      case '\r':
        out += "\\r";
        continue;
      case '\t':
        out += "\\t";
        continue;
      case '\b':
        out += "\\b";
        continue;
      case '\f':
        out += "\\f";
        continue;
      default:
        break;
    }
    if (cp < 0x20 || (ensure_ascii && cp > 0x7E)) {
      if (cp > 0xFFFF) {
        const char32_t v = cp - 0x10000;
        out += fmt::format("\\u{:04x}\\u{:04x}", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
      } else {
        out += fmt::format("\\u{:04x}", static_cast<unsigned>(cp));
      }
    } else {
      out.append(raw);
    }
  }
  out.push_back('"');
}

class JsonWriter {
 public:
  explicit JsonWriter(const JsonStyle& style) : style_(style) {}

  void write(const Value& v, int depth) {
    if (depth > kMaxJsonDumpDepth)
      problem("tojson: the value nests more than {} levels", kMaxJsonDumpDepth);
    if (out_.size() > kMaxBuiltValueBytes) problem("tojson: the JSON text would be too large");
    if (v.is_none()) {
      out_ += "null";
    } else if (v.is<bool>()) {
      out_ += v.as<bool>() ? "true" : "false";
    } else if (v.is<std::int64_t>()) {
      out_ += std::to_string(v.as<std::int64_t>());
    } else if (v.is<double>()) {
      const double d = v.as<double>();
      out_ += std::isnan(d)   ? "NaN"
              : std::isinf(d) ? (d > 0 ? "Infinity" : "-Infinity")
                              : to_text(v).text;
    } else if (v.is_string()) {
      append_json_text(out_, v.text(), style_.ensure_ascii);
    } else if (v.is<ListPtr>()) {
      const auto& items = *v.as<ListPtr>();
      if (items.empty()) {
        out_ += "[]";
        return;
      }
      out_ += '[';
      for (std::size_t i = 0; i < items.size(); ++i) {
        if (i) out_ += style_.item_separator;
        newline(depth + 1);
        write(items[i], depth + 1);
      }
      newline(depth);
      out_ += ']';
    } else if (v.is<DictPtr>()) {
      std::vector<const std::pair<std::string, Value>*> entries;
      for (const auto& entry : v.as<DictPtr>()->items) entries.push_back(&entry);
      if (entries.empty()) {
        out_ += "{}";
        return;
      }
      if (style_.sort_keys)
        std::stable_sort(entries.begin(), entries.end(),
                         [](auto* a, auto* b) { return a->first < b->first; });
      out_ += '{';
      for (std::size_t i = 0; i < entries.size(); ++i) {
        if (i) out_ += style_.item_separator;
        newline(depth + 1);
        append_json_text(out_, entries[i]->first, style_.ensure_ascii);
        out_ += style_.key_separator;
        write(entries[i]->second, depth + 1);
      }
      newline(depth);
      out_ += '}';
    } else {
      problem("Object of type {} is not JSON serializable", python_type_name(v));
    }
  }

  std::string take() { return std::move(out_); }

 private:
  void newline(int depth) {
    if (!style_.indent) return;
    out_ += '\n';
    for (int i = 0; i < depth; ++i) {
      // Deep nesting times a wide indent grows faster than the values do.
      if (out_.size() + style_.indent->size() > kMaxBuiltValueBytes)
        problem("tojson: the JSON text would be too large");
      out_ += *style_.indent;
    }
  }

  const JsonStyle& style_;
  std::string out_;
};

}  // namespace

std::string dump_json(const Value& value, const JsonStyle& style) {
  JsonWriter writer(style);
  writer.write(value, 0);
  return writer.take();
}

}  // namespace glmrt::text::jinja
