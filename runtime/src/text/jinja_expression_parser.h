// Jinja expressions, parsed from the tokens of a tag.
#pragma once

#include "jinja_ast.h"
#include "jinja_token_cursor.h"

namespace glmrt::text::jinja {

class ExpressionParser : public TokenCursor {
 public:
  using TokenCursor::TokenCursor;
  ExprPtr parse_expression(bool allow_conditional = true);

 protected:
  ExprPtr make(ExprKind kind, int line, std::string name = {});
  ExprPtr binary(std::string op, ExprPtr left, ExprPtr right, int line);
  ExprPtr parse_or();
  ExprPtr parse_and();
  ExprPtr parse_not();
  ExprPtr parse_compare();
  ExprPtr parse_math1();
  ExprPtr parse_concat();
  ExprPtr parse_math2();
  ExprPtr parse_pow();
  ExprPtr parse_unary(bool with_filter);
  ExprPtr parse_primary();
  ExprPtr literal(Value v, int line);
  ExprPtr parse_postfix(ExprPtr e);
  ExprPtr parse_subscript(ExprPtr target, int line);
  void parse_call_arguments(Expr& call, std::string_view construct);
  ExprPtr parse_filters(ExprPtr e);
  static bool starts_test_argument(const Token& t);
};

}  // namespace glmrt::text::jinja
