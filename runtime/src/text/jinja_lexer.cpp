#include "jinja_lexer.h"

#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>

#include <array>
#include <charconv>
#include <cstdlib>

#include "utf8.h"

namespace glmrt::text::jinja {
namespace {

std::string normalized_newlines(std::string_view source) {
  std::string out;
  out.reserve(source.size());
  for (std::size_t i = 0; i < source.size(); ++i) {
    if (source[i] != '\r') {
      out += source[i];
    } else {
      out += '\n';
      if (i + 1 < source.size() && source[i + 1] == '\n') ++i;
    }
  }
  // keep_trailing_newline is off: one final newline is dropped.
  if (out.ends_with('\n')) out.pop_back();
  return out;
}

// Python's str.isspace() for the code point at `pos`; its byte length or 0.
std::size_t jinja_space_length(std::string_view text, std::size_t pos) {
  const auto [c, length] = utf8::decode_at(text, pos);
  const bool space = (c >= 0x09 && c <= 0x0D) || (c >= 0x1C && c <= 0x20) || c == 0x85 ||
                     c == 0xA0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200A) || c == 0x2028 ||
                     c == 0x2029 || c == 0x202F || c == 0x205F || c == 0x3000;
  return space ? length : 0;
}

std::string jinja_rstrip(std::string_view text) {
  std::size_t end = text.size();
  while (end > 0) {
    std::size_t start = end - 1;
    while (start > 0 && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) --start;
    if (jinja_space_length(text, start) == 0) break;
    end = start;
  }
  return std::string(text.substr(0, end));
}

bool all_space(std::string_view text) {
  if (text.empty()) return false;
  for (std::size_t pos = 0; pos < text.size();) {
    const std::size_t length = jinja_space_length(text, pos);
    if (length == 0) return false;
    pos += length;
  }
  return true;
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class TagLexer {
 public:
  TagLexer(std::string_view src, std::string_view name, std::size_t& pos, int& line)
      : src_(src), name_(name), pos_(pos), line_(line) {}

  // Tokens up to the closing delimiter (`}}` or `%}` outside brackets);
  // returns the modifier before it ('-', '+' or 0).
  char lex_until(std::string_view close, std::vector<Token>& out) {
    int depth = 0;
    const int opened_at = line_;
    for (;;) {
      skip_space();
      if (pos_ >= src_.size())
        fail("{}:{}: the tag opened here is not closed (expected `{}`)", name_, opened_at, close);
      if (depth == 0) {
        for (const char modifier : {'-', '+'}) {
          if (src_[pos_] == modifier && src_.substr(pos_ + 1).starts_with(close) &&
              (modifier == '-' || close == "%}")) {
            pos_ += 1 + close.size();
            out.push_back({TokenKind::end, "", 0, 0, line_});
            return modifier;
          }
        }
        if (src_.substr(pos_).starts_with(close)) {
          pos_ += close.size();
          out.push_back({TokenKind::end, "", 0, 0, line_});
          return 0;
        }
      }
      Token token = next_token(out.empty() ? nullptr : &out.back());
      if (token.kind == TokenKind::op) {
        if (token.text == "(" || token.text == "[" || token.text == "{") ++depth;
        if ((token.text == ")" || token.text == "]" || token.text == "}") && depth > 0) --depth;
      }
      out.push_back(std::move(token));
    }
  }

 private:
  void skip_space() {
    while (pos_ < src_.size()) {
      const std::size_t length = jinja_space_length(src_, pos_);
      if (length == 0) break;
      if (src_[pos_] == '\n') ++line_;
      pos_ += length;
    }
  }

  Token next_token(const Token* previous) {
    const char c = src_[pos_];
    Token token;
    token.line = line_;
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = pos_;
      while (pos_ < src_.size() &&
             (std::isalnum(static_cast<unsigned char>(src_[pos_])) || src_[pos_] == '_'))
        ++pos_;
      token.kind = TokenKind::name;
      token.text = std::string(src_.substr(start, pos_ - start));
      return token;
    }
    if (c == '\'' || c == '"') return string_token(c);
    if (std::isdigit(static_cast<unsigned char>(c))) {
      const bool after_dot = previous && previous->kind == TokenKind::op && previous->text == ".";
      return number_token(after_dot);
    }
    static constexpr std::array<std::string_view, 6> kTwoChar = {
        "//", "**", "==", "!=", "<=", ">="};
    for (std::string_view op : kTwoChar)
      if (src_.substr(pos_).starts_with(op)) {
        pos_ += 2;
        token.kind = TokenKind::op;
        token.text = std::string(op);
        return token;
      }
    if (std::string_view("+-*/%~<>=()[]{},.:|;").find(c) != std::string_view::npos) {
      ++pos_;
      token.kind = TokenKind::op;
      token.text = std::string(1, c);
      return token;
    }
    fail("{}:{}: unexpected character '{}' in a tag", name_, line_,
         printable(src_.substr(pos_, utf8::decode_at(src_, pos_).length)));
  }

  Token number_token(bool integer_only) {
    Token token;
    token.line = line_;
    const std::size_t start = pos_;
    auto digits = [&] {
      while (pos_ < src_.size() && (std::isdigit(static_cast<unsigned char>(src_[pos_])) ||
                                    (src_[pos_] == '_' && pos_ + 1 < src_.size() &&
                                     std::isdigit(static_cast<unsigned char>(src_[pos_ + 1])))))
        ++pos_;
    };
    digits();
    bool is_float = false;
    if (!integer_only && pos_ + 1 < src_.size() && src_[pos_] == '.' &&
        std::isdigit(static_cast<unsigned char>(src_[pos_ + 1]))) {
      is_float = true;
      ++pos_;
      digits();
    }
    if (!integer_only && pos_ < src_.size() && (src_[pos_] == 'e' || src_[pos_] == 'E')) {
      std::size_t look = pos_ + 1;
      if (look < src_.size() && (src_[look] == '+' || src_[look] == '-')) ++look;
      if (look < src_.size() && std::isdigit(static_cast<unsigned char>(src_[look]))) {
        is_float = true;
        pos_ = look;
        digits();
      }
    }
    std::string text;
    for (const char d : src_.substr(start, pos_ - start))
      if (d != '_') text += d;
    if (is_float) {
      token.kind = TokenKind::floating;
      token.floating = std::strtod(text.c_str(), nullptr);
    } else {
      token.kind = TokenKind::integer;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), token.integer);
      if (ec != std::errc() || end != text.data() + text.size())
        fail("{}:{}: the integer {} is too large", name_, line_, printable(text, 64));
    }
    token.text = text;
    return token;
  }

  // A quoted literal with Python's escapes (Jinja2 decodes it with
  // "unicode-escape"); raw newlines may appear inside.
  Token string_token(char quote) {
    Token token;
    token.kind = TokenKind::string;
    token.line = line_;
    ++pos_;
    std::string& out = token.text;
    for (;;) {
      if (pos_ >= src_.size())
        fail("{}:{}: the string literal opened here is not closed", name_, token.line);
      const char c = src_[pos_];
      if (c == quote) {
        ++pos_;
        return token;
      }
      if (c == '\n') ++line_;
      if (c != '\\' || pos_ + 1 >= src_.size()) {
        out += c;
        ++pos_;
        continue;
      }
      const char e = src_[pos_ + 1];
      pos_ += 2;
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case '\\':
          out += '\\';
          break;
        case '\'':
          out += '\'';
          break;
        case '"':
          out += '"';
          break;
        case 'a':
          out += '\a';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'v':
          out += '\v';
          break;
        case '\n':
          ++line_;
          break;  // a line continuation
        case 'x':
        case 'u':
        case 'U': {
          const int count = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          char32_t cp = 0;
          for (int i = 0; i < count; ++i) {
            const int d = pos_ < src_.size() ? hex_digit(src_[pos_]) : -1;
            if (d < 0)
              fail("{}:{}: a \\{} escape in a string literal needs {} hex digits", name_, line_, e,
                   count);
            cp = cp * 16 + static_cast<char32_t>(d);
            ++pos_;
          }
          if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            fail("{}:{}: the escape \\{} names no Unicode character", name_, line_, e);
          utf8::append(out, cp);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            char32_t cp = static_cast<char32_t>(e - '0');
            for (int i = 0; i < 2 && pos_ < src_.size() && src_[pos_] >= '0' && src_[pos_] <= '7';
                 ++i)
              cp = cp * 8 + static_cast<char32_t>(src_[pos_++] - '0');
            utf8::append(out, cp);
          } else {  // unknown escapes keep their backslash, as in Python
            out += '\\';
            out += e;
          }
      }
    }
  }

  std::string_view src_;
  std::string_view name_;
  std::size_t& pos_;
  int& line_;
};

int count_newlines(std::string_view text) {
  int n = 0;
  for (const char c : text) n += c == '\n';
  return n;
}

// `{% raw %}`: the text up to `{% endraw %}`, verbatim.
bool is_raw_tag(const std::vector<Token>& tokens) {
  return tokens.size() == 2 && tokens[0].kind == TokenKind::name && tokens[0].text == "raw";
}

}  // namespace

std::vector<Piece> split_template(std::string_view raw_source, std::string_view name) {
  const std::string source = normalized_newlines(raw_source);
  std::vector<Piece> pieces;
  std::size_t pos = 0;
  int line = 1;
  bool line_starting = true;
  for (;;) {
    std::size_t open = source.find('{', pos);
    while (open != std::string::npos && open + 1 < source.size() &&
           std::string_view("{%#").find(source[open + 1]) == std::string_view::npos)
      open = source.find('{', open + 1);
    if (open == std::string::npos || open + 1 >= source.size()) {
      if (pos < source.size()) pieces.push_back({PieceKind::text, source.substr(pos), {}, line});
      return pieces;
    }
    const char kind = source[open + 1];
    const char left = open + 2 < source.size() ? source[open + 2] : 0;
    std::string text = source.substr(pos, open - pos);
    const int text_line = line;
    line += count_newlines(text);
    if (left == '-') {
      text = jinja_rstrip(text);
    } else if (left != '+' && kind != '{') {  // lstrip_blocks
      const std::size_t l_pos = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
      if ((l_pos > 0 || line_starting) && all_space(std::string_view(text).substr(l_pos)))
        text.resize(l_pos);
    }
    if (!text.empty()) pieces.push_back({PieceKind::text, std::move(text), {}, text_line});
    pos = open + 2 + (left == '-' || left == '+' ? 1 : 0);
    const int tag_line = line;
    char right = 0;
    if (kind == '#') {
      const std::size_t close = source.find("#}", pos);
      if (close == std::string::npos)
        fail("{}:{}: the comment opened here is not closed (expected `#}}`)", name, tag_line);
      line += count_newlines(std::string_view(source).substr(pos, close - pos));
      if (close > pos && (source[close - 1] == '-' || source[close - 1] == '+'))
        right = source[close - 1];
      pos = close + 2;
    } else {
      Piece piece{kind == '{' ? PieceKind::output : PieceKind::statement, "", {}, tag_line};
      TagLexer lexer(source, name, pos, line);
      right = lexer.lex_until(kind == '{' ? "}}" : "%}", piece.tokens);
      if (kind == '%' && is_raw_tag(piece.tokens)) {
        // The first `{% endraw %}` (any spacing and modifiers) ends it.
        std::size_t search = pos;
        for (;;) {
          const std::size_t tag = source.find("{%", search);
          if (tag == std::string::npos)
            fail("{}:{}: `{{% raw %}}` is not closed by `{{% endraw %}}`", name, tag_line);
          std::size_t p = tag + 2;
          const char raw_left = source[p] == '-' || source[p] == '+' ? source[p++] : 0;
          while (p < source.size() && (source[p] == ' ' || source[p] == '\t')) ++p;
          if (source.compare(p, 6, "endraw") != 0) {
            search = tag + 2;
            continue;
          }
          p += 6;
          while (p < source.size() && (source[p] == ' ' || source[p] == '\t')) ++p;
          right = p < source.size() && (source[p] == '-' || source[p] == '+') ? source[p++] : 0;
          if (source.compare(p, 2, "%}") != 0) {
            search = tag + 2;
            continue;
          }
          std::string body = source.substr(pos, tag - pos);
          if (raw_left == '-') body = jinja_rstrip(body);
          line += count_newlines(std::string_view(source).substr(pos, p + 2 - pos));
          if (!body.empty()) pieces.push_back({PieceKind::text, std::move(body), {}, tag_line});
          pos = p + 2;
          break;
        }
      } else {
        pieces.push_back(std::move(piece));
      }
    }
    line_starting = false;
    if (right == '-') {
      while (pos < source.size()) {
        const std::size_t length = jinja_space_length(source, pos);
        if (length == 0) break;
        line_starting = source[pos] == '\n';
        line += source[pos] == '\n';
        pos += length;
      }
    } else if (right != '+' && kind != '{' && pos < source.size() && source[pos] == '\n') {
      ++pos;  // trim_blocks
      ++line;
      line_starting = true;
    }
  }
}

}  // namespace glmrt::text::jinja
