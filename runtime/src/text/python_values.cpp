#include "python_values.h"

#include <glmrt/base/error.h>
#include <glmrt/base/json_nesting.h>

#include <fmt/format.h>

#include "utf8.h"

namespace glmrt::text::python {

namespace {

void append_json_string(std::string& out, std::string_view text) {
  out.push_back('"');
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

// Recursion goes one call deeper per array or object; documents are bounded
// when parsed (json_nesting.h), and a value built in code is held to the same
// bound here. `depth` counts the containers enclosing a value.
void require_depth_within_bound(const Value& value, int depth) {
  if (value.is_structured() && depth >= kMaxJsonNesting)
    fail("cannot print a JSON value whose arrays and objects nest more than {} levels deep",
         kMaxJsonNesting);
}

void append_json(std::string& out, const Value& value, int depth) {
  require_depth_within_bound(value, depth);
  switch (value.type()) {
    case Value::value_t::object: {
      out.push_back('{');
      bool first = true;
      for (const auto& [key, item] : value.items()) {
        if (!first) out += ", ";
        first = false;
        append_json_string(out, key);
        out += ": ";
        append_json(out, item, depth + 1);
      }
      out.push_back('}');
      break;
    }
    case Value::value_t::array: {
      out.push_back('[');
      for (std::size_t i = 0; i < value.size(); ++i) {
        if (i) out += ", ";
        append_json(out, value[i], depth + 1);
      }
      out.push_back(']');
      break;
    }
    case Value::value_t::string:
      append_json_string(out, value.get_ref<const std::string&>());
      break;
    default:  // null, booleans and numbers print as in JSON (floats round-trip)
      out += value.dump();
  }
}

// Python's repr of a str: single quotes unless the text has ' and no ".
void append_string_repr(std::string& out, std::string_view text) {
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

void append_repr(std::string& out, const Value& value, int depth) {
  require_depth_within_bound(value, depth);
  switch (value.type()) {
    case Value::value_t::object: {
      out.push_back('{');
      bool first = true;
      for (const auto& [key, item] : value.items()) {
        if (!first) out += ", ";
        first = false;
        append_string_repr(out, key);
        out += ": ";
        append_repr(out, item, depth + 1);
      }
      out.push_back('}');
      break;
    }
    case Value::value_t::array: {
      out.push_back('[');
      for (std::size_t i = 0; i < value.size(); ++i) {
        if (i) out += ", ";
        append_repr(out, value[i], depth + 1);
      }
      out.push_back(']');
      break;
    }
    case Value::value_t::string:
      append_string_repr(out, value.get_ref<const std::string&>());
      break;
    default:
      out += str(value);
  }
}

// Python's str.isspace() for one code point.
bool is_python_space(char32_t c) {
  return (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 || c == 0xA0 ||
         c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 || c == 0x2029 || c == 0x202F ||
         c == 0x205F || c == 0x3000;
}

}  // namespace

std::string json_dumps(const Value& value) {
  std::string out;
  append_json(out, value, 0);
  return out;
}

std::string str(const Value& value) {
  switch (value.type()) {
    case Value::value_t::null:
    case Value::value_t::discarded:
      return "None";
    case Value::value_t::boolean:
      return value.get<bool>() ? "True" : "False";
    case Value::value_t::string:
      return value.get<std::string>();
    case Value::value_t::object:
    case Value::value_t::array: {
      std::string out;
      append_repr(out, value, 0);
      return out;
    }
    default:
      return value.dump();
  }
}

std::string_view strip(std::string_view text) {
  std::size_t begin = 0;
  while (begin < text.size()) {
    const auto [cp, length] = utf8::decode_at(text, begin);
    if (!is_python_space(cp)) break;
    begin += length;
  }
  std::size_t end = text.size();
  while (end > begin) {
    std::size_t start = end - 1;
    while (start > begin && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    if (!is_python_space(utf8::decode_at(text, start).code_point)) break;
    end = start;
  }
  return text.substr(begin, end - begin);
}

bool truthy(const Value& value) {
  switch (value.type()) {
    case Value::value_t::null:
    case Value::value_t::discarded:
      return false;
    case Value::value_t::boolean:
      return value.get<bool>();
    case Value::value_t::number_integer:
      return value.get<std::int64_t>() != 0;
    case Value::value_t::number_unsigned:
      return value.get<std::uint64_t>() != 0;
    case Value::value_t::number_float:
      return value.get<double>() != 0.0;
    default:
      return !value.empty();
  }
}

}  // namespace glmrt::text::python
