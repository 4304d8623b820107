// Splits a Jinja template into text and tags as Jinja2's lexer does under
// transformers' settings (trim_blocks, lstrip_blocks, keep_trailing_newline
// off, "\r\n" and "\r" read as "\n"), and the tags into tokens.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace glmrt::text::jinja {

enum class TokenKind { name, string, integer, floating, op, end };

struct Token {
  TokenKind kind = TokenKind::end;
  std::string text;  // names, operators and (unescaped) string literals
  std::int64_t integer = 0;
  double floating = 0;
  int line = 1;
};

enum class PieceKind { text, output, statement };

// Literal text, `{{ ... }}` or `{% ... %}` (comments are dropped); the tokens
// of a tag end with a TokenKind::end token.
struct Piece {
  PieceKind kind = PieceKind::text;
  std::string text;
  std::vector<Token> tokens;
  int line = 1;
};

// Throws glmrt::Error naming `template_name`, the line and what is wrong
// (an unclosed tag, comment or string, a character no token starts with).
std::vector<Piece> split_template(std::string_view source, std::string_view template_name);

}  // namespace glmrt::text::jinja
