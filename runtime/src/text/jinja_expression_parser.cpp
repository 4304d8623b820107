// Recursive descent over the tokens of a tag, with Jinja2's precedence:
// conditional < or < and < not < comparisons/in < + - < ~ < * / // % < ** <
// unary - + < postfix (. [] ()) < filters and tests.
#include "jinja_expression_parser.h"

namespace glmrt::text::jinja {

ExprPtr ExpressionParser::make(ExprKind kind, int line, std::string name) {
  auto e = std::make_unique<Expr>();
  e->kind = kind;
  e->line = line;
  e->name = std::move(name);
  return e;
}

ExprPtr ExpressionParser::binary(std::string op, ExprPtr left, ExprPtr right, int line) {
  ExprPtr e = make(ExprKind::binary, line, std::move(op));
  e->children.push_back(std::move(left));
  e->children.push_back(std::move(right));
  return e;
}

ExprPtr ExpressionParser::parse_expression(bool allow_conditional) {
  DepthGuard guard(*this, peek().line);
  ExprPtr e = parse_or();
  while (allow_conditional && peek().kind == TokenKind::name && peek().text == "if") {
    const int line = next().line;
    ExprPtr c = make(ExprKind::conditional, line);
    c->children.push_back(std::move(e));
    c->children.push_back(parse_or());
    c->children.push_back(accept_name("else") ? parse_expression() : nullptr);
    e = std::move(c);
  }
  return e;
}

ExprPtr ExpressionParser::parse_or() {
  ExprPtr e = parse_and();
  while (peek().kind == TokenKind::name && peek().text == "or") {
    const int line = next().line;
    e = binary("or", std::move(e), parse_and(), line);
  }
  return e;
}

ExprPtr ExpressionParser::parse_and() {
  ExprPtr e = parse_not();
  while (peek().kind == TokenKind::name && peek().text == "and") {
    const int line = next().line;
    e = binary("and", std::move(e), parse_not(), line);
  }
  return e;
}

ExprPtr ExpressionParser::parse_not() {
  if (peek().kind == TokenKind::name && peek().text == "not") {
    DepthGuard guard(*this, peek().line);
    ExprPtr e = make(ExprKind::unary, next().line, "not");
    e->children.push_back(parse_not());
    return e;
  }
  return parse_compare();
}

ExprPtr ExpressionParser::parse_compare() {
  ExprPtr e = parse_math1();
  for (;;) {
    const Token& t = peek();
    const int line = t.line;
    if (t.kind == TokenKind::op && (t.text == "==" || t.text == "!=" || t.text == "<" ||
                                    t.text == "<=" || t.text == ">" || t.text == ">=")) {
      std::string op = next().text;
      e = binary(std::move(op), std::move(e), parse_math1(), line);
    } else if (t.kind == TokenKind::name && t.text == "in") {
      ++token_;
      e = binary("in", std::move(e), parse_math1(), line);
    } else if (t.kind == TokenKind::name && t.text == "not" && peek(1).kind == TokenKind::name &&
               peek(1).text == "in") {
      token_ += 2;
      e = binary("in", std::move(e), parse_math1(), line);
      e->negated = true;
    } else {
      return e;
    }
  }
}

ExprPtr ExpressionParser::parse_math1() {
  ExprPtr e = parse_concat();
  while (peek().kind == TokenKind::op && (peek().text == "+" || peek().text == "-")) {
    const Token& t = next();
    e = binary(t.text, std::move(e), parse_concat(), t.line);
  }
  return e;
}

ExprPtr ExpressionParser::parse_concat() {
  ExprPtr e = parse_math2();
  while (peek().kind == TokenKind::op && peek().text == "~") {
    const int line = next().line;
    e = binary("~", std::move(e), parse_math2(), line);
  }
  return e;
}

ExprPtr ExpressionParser::parse_math2() {
  ExprPtr e = parse_pow();
  while (peek().kind == TokenKind::op &&
         (peek().text == "*" || peek().text == "/" || peek().text == "//" || peek().text == "%")) {
    const Token& t = next();
    e = binary(t.text, std::move(e), parse_pow(), t.line);
  }
  return e;
}

ExprPtr ExpressionParser::parse_pow() {
  ExprPtr e = parse_unary(true);
  while (peek().kind == TokenKind::op && peek().text == "**") {
    const int line = next().line;
    e = binary("**", std::move(e), parse_unary(true), line);
  }
  return e;
}

ExprPtr ExpressionParser::parse_unary(bool with_filter) {
  DepthGuard guard(*this, peek().line);
  ExprPtr e;
  if (peek().kind == TokenKind::op && (peek().text == "-" || peek().text == "+")) {
    const Token& t = next();
    e = make(ExprKind::unary, t.line, t.text);
    e->children.push_back(parse_unary(false));
  } else {
    e = parse_postfix(parse_primary());
  }
  if (with_filter) return parse_filters(std::move(e));
  return e;
}

ExprPtr ExpressionParser::parse_primary() {
  const Token& t = next();
  if (t.kind == TokenKind::name) {
    if (t.text == "true" || t.text == "True") return literal(true, t.line);
    if (t.text == "false" || t.text == "False") return literal(false, t.line);
    if (t.text == "none" || t.text == "None") return literal(None{}, t.line);
    return make(ExprKind::name, t.line, t.text);
  }
  if (t.kind == TokenKind::string) {
    std::string text = t.text;
    while (peek().kind == TokenKind::string) text += next().text;  // adjacent literals join
    return literal(Value(std::move(text)), t.line);
  }
  if (t.kind == TokenKind::integer) return literal(t.integer, t.line);
  if (t.kind == TokenKind::floating) return literal(t.floating, t.line);
  if (t.kind == TokenKind::op && t.text == "(") {
    if (accept_op(")")) return make(ExprKind::tuple, t.line);
    ExprPtr first = parse_expression();
    if (accept_op(")")) return first;
    ExprPtr tuple = make(ExprKind::tuple, t.line);
    tuple->children.push_back(std::move(first));
    while (accept_op(",")) {
      if (peek().kind == TokenKind::op && peek().text == ")") break;
      tuple->children.push_back(parse_expression());
    }
    expect_op(")", "a tuple");
    return tuple;
  }
  if (t.kind == TokenKind::op && t.text == "[") {
    ExprPtr list = make(ExprKind::list, t.line);
    while (!accept_op("]")) {
      if (!list->children.empty()) {
        expect_op(",", "a list");
        if (accept_op("]")) break;
      }
      list->children.push_back(parse_expression());
    }
    return list;
  }
  if (t.kind == TokenKind::op && t.text == "{") {
    ExprPtr dict = make(ExprKind::dict, t.line);
    while (!accept_op("}")) {
      if (!dict->children.empty()) {
        expect_op(",", "a dict");
        if (accept_op("}")) break;
      }
      dict->children.push_back(parse_expression());
      expect_op(":", "a dict");
      dict->children.push_back(parse_expression());
    }
    return dict;
  }
  error(t.line, "an expression",
        t.kind == TokenKind::end ? std::string("expected a value, found the end of the tag")
                                 : fmt::format("unexpected `{}`", printable(t.text, 64)));
}

ExprPtr ExpressionParser::literal(Value v, int line) {
  ExprPtr e = make(ExprKind::literal, line);
  e->value = std::move(v);
  return e;
}

ExprPtr ExpressionParser::parse_postfix(ExprPtr e) {
  for (;;) {
    const Token& t = peek();
    if (t.kind != TokenKind::op) return e;
    if (t.text == ".") {
      ++token_;
      const Token& attr = next();
      if (attr.kind == TokenKind::integer) {
        ExprPtr item = make(ExprKind::item, attr.line);
        item->children.push_back(std::move(e));
        item->children.push_back(literal(attr.integer, attr.line));
        e = std::move(item);
      } else if (attr.kind == TokenKind::name) {
        ExprPtr a = make(ExprKind::attribute, attr.line, attr.text);
        a->children.push_back(std::move(e));
        e = std::move(a);
      } else {
        error(attr.line, "`.`", "expected an attribute name after `.`");
      }
    } else if (t.text == "[") {
      e = parse_subscript(std::move(e), next().line);
    } else if (t.text == "(") {
      ++token_;
      ExprPtr call = make(ExprKind::call, t.line);
      call->children.push_back(std::move(e));
      parse_call_arguments(*call, "a call");
      e = std::move(call);
    } else {
      return e;
    }
  }
}

ExprPtr ExpressionParser::parse_subscript(ExprPtr target, int line) {
  ExprPtr parts[3];
  bool is_slice = false;
  for (int i = 0; i < 3; ++i) {
    if (!(peek().kind == TokenKind::op && (peek().text == ":" || peek().text == "]")))
      parts[i] = parse_expression();
    if (i < 2 && accept_op(":")) {
      is_slice = true;
      continue;
    }
    break;
  }
  expect_op("]", "a subscript");
  ExprPtr e = make(is_slice ? ExprKind::slice : ExprKind::item, line);
  e->children.push_back(std::move(target));
  if (!is_slice && !parts[0]) error(line, "a subscript", "expected an index");
  for (int i = 0; i < (is_slice ? 3 : 1); ++i) e->children.push_back(std::move(parts[i]));
  return e;
}

// After `(`: positional and keyword arguments up to `)`.
void ExpressionParser::parse_call_arguments(Expr& call, std::string_view construct) {
  bool first = true;
  while (!accept_op(")")) {
    if (!first) {
      expect_op(",", construct);
      if (accept_op(")")) break;
    }
    first = false;
    if (peek().kind == TokenKind::name && peek(1).kind == TokenKind::op && peek(1).text == "=") {
      std::string key = next().text;
      ++token_;
      call.keywords.emplace_back(std::move(key), parse_expression());
    } else {
      if (!call.keywords.empty())
        error(peek().line, construct, "a positional argument follows a keyword argument");
      call.children.push_back(parse_expression());
    }
  }
}

ExprPtr ExpressionParser::parse_filters(ExprPtr e) {
  for (;;) {
    const Token& t = peek();
    if (t.kind == TokenKind::op && t.text == "|") {
      ++token_;
      ExprPtr f = make(ExprKind::filter, t.line, expect_name("a filter"));
      while (accept_op(".")) f->name += "." + expect_name("a filter");
      f->children.push_back(std::move(e));
      if (accept_op("(")) parse_call_arguments(*f, "a filter");
      e = parse_postfix(std::move(f));
    } else if (t.kind == TokenKind::name && t.text == "is") {
      ++token_;
      ExprPtr test = make(ExprKind::test, t.line);
      test->negated = accept_name("not");
      test->name = expect_name("a test");
      test->children.push_back(std::move(e));
      if (accept_op("(")) {
        parse_call_arguments(*test, "a test");
      } else if (starts_test_argument(peek())) {
        test->children.push_back(parse_postfix(parse_primary()));
      }
      e = std::move(test);
    } else {
      return e;
    }
  }
}

// `x is divisibleby 3`, `x is sameas none`: one bare argument.
bool ExpressionParser::starts_test_argument(const Token& t) {
  if (t.kind == TokenKind::string || t.kind == TokenKind::integer || t.kind == TokenKind::floating)
    return true;
  if (t.kind == TokenKind::op) return t.text == "[" || t.text == "{" || t.text == "(";
  if (t.kind == TokenKind::name)
    return t.text != "and" && t.text != "or" && t.text != "if" && t.text != "else" &&
           t.text != "is" && t.text != "in" && t.text != "not";
  return false;
}

}  // namespace glmrt::text::jinja
