// The tokens of one tag as the parser walks them, and how it reports an
// error (template, line, construct).
#pragma once

#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>

#include <algorithm>
#include <span>
#include <string>
#include <string_view>

#include "jinja_lexer.h"

namespace glmrt::text::jinja {

// Nesting bound: a hostile template cannot exhaust the stack.
constexpr int kMaxParseDepth = 256;

class TokenCursor {
 public:
  explicit TokenCursor(std::string_view name) : name_(name) {}

 protected:
  void reset(std::span<const Token> tokens) {
    tokens_ = tokens;
    token_ = 0;
  }

  const Token& peek(std::size_t ahead = 0) const {
    const std::size_t i = std::min(token_ + ahead, tokens_.size() - 1);
    return tokens_[i];
  }
  const Token& next() {
    const Token& t = peek();
    if (token_ + 1 < tokens_.size()) ++token_;
    return t;
  }
  bool accept_op(std::string_view op) {
    if (peek().kind == TokenKind::op && peek().text == op) return ++token_, true;
    return false;
  }
  bool accept_name(std::string_view name) {
    if (peek().kind == TokenKind::name && peek().text == name) return ++token_, true;
    return false;
  }
  void expect_op(std::string_view op, std::string_view construct) {
    if (!accept_op(op))
      error(peek().line, construct, fmt::format("expected `{}`, found {}", op, describe(peek())));
  }
  std::string expect_name(std::string_view construct) {
    if (peek().kind != TokenKind::name)
      error(peek().line, construct, fmt::format("expected a name, found {}", describe(peek())));
    return next().text;
  }
  void expect_end(std::string_view construct) {
    if (peek().kind != TokenKind::end)
      error(peek().line, construct,
            fmt::format("expected the end of the tag, found {}", describe(peek())));
  }
  static std::string describe(const Token& t) {
    if (t.kind == TokenKind::end) return "the end of the tag";
    if (t.kind == TokenKind::string) return "a string";
    return fmt::format("`{}`", printable(t.text, 64));
  }

  [[noreturn]] void error(int line, std::string_view construct, std::string_view message) const {
    fail("{}:{}: {}: {}", name_, line, construct, message);
  }

  struct DepthGuard {
    DepthGuard(TokenCursor& p, int line) : parser(p) {
      if (++parser.depth_ > kMaxParseDepth)
        parser.error(line, "the template",
                     fmt::format("nests more than {} levels deep", kMaxParseDepth));
    }
    ~DepthGuard() { --parser.depth_; }
    TokenCursor& parser;
  };

  std::string_view name_;
  std::span<const Token> tokens_;
  std::size_t token_ = 0;
  int depth_ = 0;
};

}  // namespace glmrt::text::jinja
