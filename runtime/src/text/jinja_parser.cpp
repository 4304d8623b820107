// Recursive descent over the tokens of each tag, with Jinja2's precedence:
// conditional < or < and < not < comparisons/in < + - < ~ < * / // % < ** <
// unary - + < postfix (. [] ()) < filters and tests.
#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>

#include <span>

#include "jinja_ast.h"
#include "jinja_lexer.h"

namespace glmrt::text::jinja {
namespace {

// Nesting bound: a hostile template cannot exhaust the stack.
constexpr int kMaxParseDepth = 256;

class Parser {
 public:
  Parser(std::vector<Piece> pieces, std::string_view name)
      : pieces_(std::move(pieces)), name_(name) {}

  Body parse() {
    std::string end;
    Body body = parse_body({}, end);
    return body;
  }

 private:
  // ---- statements ----------------------------------------------------

  // Nodes up to one of `ends` (whose keyword is stored in `found`).
  Body parse_body(std::initializer_list<std::string_view> ends, std::string& found) {
    DepthGuard guard(*this, line());
    Body body;
    while (piece_ < pieces_.size()) {
      Piece& piece = pieces_[piece_];
      if (piece.kind == PieceKind::text) {
        auto node = std::make_unique<Node>();
        node->kind = NodeKind::text;
        node->line = piece.line;
        node->text = std::move(piece.text);
        body.push_back(std::move(node));
        ++piece_;
        continue;
      }
      tokens_ = piece.tokens;
      token_ = 0;
      if (piece.kind == PieceKind::output) {
        auto node = std::make_unique<Node>();
        node->kind = NodeKind::output;
        node->line = piece.line;
        node->expr = parse_expression();
        expect_end("{{ ... }}");
        body.push_back(std::move(node));
        ++piece_;
        continue;
      }
      const Token& keyword = peek();
      if (keyword.kind != TokenKind::name)
        error(keyword.line, "a tag", "expected a statement name");
      for (std::string_view end : ends)
        if (keyword.text == end) {
          found = keyword.text;
          ++token_;
          ++piece_;
          return body;
        }
      ++piece_;
      ++token_;
      if (keyword.text == "generation") {  // transformers' pass-through tag
        expect_end("{% generation %}");
        std::string end;
        Body inner = parse_body({"endgeneration"}, end);
        require_closed(end, "generation", keyword.line);
        expect_end("{% endgeneration %}");
        for (auto& node : inner) body.push_back(std::move(node));
        continue;
      }
      body.push_back(parse_statement(keyword));
    }
    if (ends.size() != 0) found.clear();
    return body;
  }

  void require_closed(const std::string& found, std::string_view what, int line) {
    if (found.empty())
      error(line, fmt::format("{{% {} %}}", what), "is not closed before the end of the template");
  }

  std::unique_ptr<Node> parse_statement(const Token& keyword) {
    auto node = std::make_unique<Node>();
    node->line = keyword.line;
    const std::string& k = keyword.text;
    if (k == "if") {
      node->kind = NodeKind::if_chain;
      std::string end = "elif";
      ExprPtr condition = parse_expression();
      while (end == "elif") {
        expect_end("{% if %}");
        Branch branch{std::move(condition), parse_body({"elif", "else", "endif"}, end)};
        node->branches.push_back(std::move(branch));
        require_closed(end, "if", keyword.line);
        if (end == "elif") condition = parse_expression();
      }
      if (end == "else") {
        expect_end("{% else %}");
        node->else_body = parse_body({"endif"}, end);
        require_closed(end, "if", keyword.line);
      }
      expect_end("{% endif %}");
    } else if (k == "for") {
      node->kind = NodeKind::for_loop;
      do node->targets.push_back(expect_name("{% for %}"));
      while (accept_op(","));
      if (!accept_name("in"))
        error(peek().line, "{% for %}", "expected `in` after the loop variables");
      node->expr = parse_expression(/*allow_conditional=*/false);
      if (accept_name("if")) node->condition = parse_expression();
      expect_end("{% for %}");
      std::string end;
      node->body = parse_body({"else", "endfor"}, end);
      require_closed(end, "for", keyword.line);
      if (end == "else") {
        expect_end("{% else %}");
        node->else_body = parse_body({"endfor"}, end);
        require_closed(end, "for", keyword.line);
      }
      expect_end("{% endfor %}");
    } else if (k == "set") {
      node->targets.push_back(expect_name("{% set %}"));
      if (accept_op(".")) node->attribute = expect_name("{% set %}");
      while (node->attribute.empty() && accept_op(","))
        node->targets.push_back(expect_name("{% set %}"));
      if (accept_op("=")) {
        node->kind = NodeKind::set;
        node->expr = parse_expression();
        expect_end("{% set %}");
      } else {
        if (!node->attribute.empty() || node->targets.size() != 1)
          error(keyword.line, "{% set %}", "a block set assigns one plain name");
        node->kind = NodeKind::set_block;
        expect_end("{% set %}");
        std::string end;
        node->body = parse_body({"endset"}, end);
        require_closed(end, "set", keyword.line);
        expect_end("{% endset %}");
      }
    } else if (k == "macro") {
      node->kind = NodeKind::macro;
      node->text = expect_name("{% macro %}");
      node->parameters = parse_parameters("{% macro %}");
      expect_end("{% macro %}");
      std::string end;
      node->body = parse_body({"endmacro"}, end);
      require_closed(end, "macro", keyword.line);
      if (peek().kind == TokenKind::name && peek().text == node->text) ++token_;
      expect_end("{% endmacro %}");
    } else if (k == "call") {
      node->kind = NodeKind::call_block;
      if (peek().kind == TokenKind::op && peek().text == "(")
        node->parameters = parse_parameters("{% call %}");
      node->expr = parse_expression();
      if (node->expr->kind != ExprKind::call)
        error(keyword.line, "{% call %}", "expected a macro call");
      expect_end("{% call %}");
      std::string end;
      node->body = parse_body({"endcall"}, end);
      require_closed(end, "call", keyword.line);
      expect_end("{% endcall %}");
    } else if (k == "break" || k == "continue") {
      node->kind = k == "break" ? NodeKind::loop_break : NodeKind::loop_continue;
      expect_end(k == "break" ? "{% break %}" : "{% continue %}");
    } else {
      error(keyword.line, fmt::format("{{% {} %}}", printable(k, 64)),
            "is not a statement this engine knows (or is not opened before)");
    }
    return node;
  }

  std::vector<Parameter> parse_parameters(std::string_view construct) {
    std::vector<Parameter> parameters;
    expect_op("(", construct);
    while (!accept_op(")")) {
      if (!parameters.empty()) expect_op(",", construct);
      if (accept_op(")")) break;
      Parameter parameter{expect_name(construct), nullptr};
      if (accept_op("=")) parameter.default_value = parse_expression();
      parameters.push_back(std::move(parameter));
    }
    return parameters;
  }

  // ---- expressions ---------------------------------------------------

  ExprPtr make(ExprKind kind, int line, std::string name = {}) {
    auto e = std::make_unique<Expr>();
    e->kind = kind;
    e->line = line;
    e->name = std::move(name);
    return e;
  }

  ExprPtr binary(std::string op, ExprPtr left, ExprPtr right, int line) {
    ExprPtr e = make(ExprKind::binary, line, std::move(op));
    e->children.push_back(std::move(left));
    e->children.push_back(std::move(right));
    return e;
  }

  ExprPtr parse_expression(bool allow_conditional = true) {
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

  ExprPtr parse_or() {
    ExprPtr e = parse_and();
    while (peek().kind == TokenKind::name && peek().text == "or") {
      const int line = next().line;
      e = binary("or", std::move(e), parse_and(), line);
    }
    return e;
  }

  ExprPtr parse_and() {
    ExprPtr e = parse_not();
    while (peek().kind == TokenKind::name && peek().text == "and") {
      const int line = next().line;
      e = binary("and", std::move(e), parse_not(), line);
    }
    return e;
  }

  ExprPtr parse_not() {
    if (peek().kind == TokenKind::name && peek().text == "not") {
      DepthGuard guard(*this, peek().line);
      ExprPtr e = make(ExprKind::unary, next().line, "not");
      e->children.push_back(parse_not());
      return e;
    }
    return parse_compare();
  }

  ExprPtr parse_compare() {
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

  ExprPtr parse_math1() {
    ExprPtr e = parse_concat();
    while (peek().kind == TokenKind::op && (peek().text == "+" || peek().text == "-")) {
      const Token& t = next();
      e = binary(t.text, std::move(e), parse_concat(), t.line);
    }
    return e;
  }

  ExprPtr parse_concat() {
    ExprPtr e = parse_math2();
    while (peek().kind == TokenKind::op && peek().text == "~") {
      const int line = next().line;
      e = binary("~", std::move(e), parse_math2(), line);
    }
    return e;
  }

  ExprPtr parse_math2() {
    ExprPtr e = parse_pow();
    while (peek().kind == TokenKind::op && (peek().text == "*" || peek().text == "/" ||
                                            peek().text == "//" || peek().text == "%")) {
      const Token& t = next();
      e = binary(t.text, std::move(e), parse_pow(), t.line);
    }
    return e;
  }

  ExprPtr parse_pow() {
    ExprPtr e = parse_unary(true);
    while (peek().kind == TokenKind::op && peek().text == "**") {
      const int line = next().line;
      e = binary("**", std::move(e), parse_unary(true), line);
    }
    return e;
  }

  ExprPtr parse_unary(bool with_filter) {
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

  ExprPtr parse_primary() {
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

  ExprPtr literal(Value v, int line) {
    ExprPtr e = make(ExprKind::literal, line);
    e->value = std::move(v);
    return e;
  }

  ExprPtr parse_postfix(ExprPtr e) {
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

  ExprPtr parse_subscript(ExprPtr target, int line) {
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
  void parse_call_arguments(Expr& call, std::string_view construct) {
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

  ExprPtr parse_filters(ExprPtr e) {
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
  static bool starts_test_argument(const Token& t) {
    if (t.kind == TokenKind::string || t.kind == TokenKind::integer ||
        t.kind == TokenKind::floating)
      return true;
    if (t.kind == TokenKind::op) return t.text == "[" || t.text == "{" || t.text == "(";
    if (t.kind == TokenKind::name)
      return t.text != "and" && t.text != "or" && t.text != "if" && t.text != "else" &&
             t.text != "is" && t.text != "in" && t.text != "not";
    return false;
  }

  // ---- tokens --------------------------------------------------------

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
  int line() const { return piece_ < pieces_.size() ? pieces_[piece_].line : 0; }

  struct DepthGuard {
    DepthGuard(Parser& p, int line) : parser(p) {
      if (++parser.depth_ > kMaxParseDepth)
        parser.error(line, "the template",
                     fmt::format("nests more than {} levels deep", kMaxParseDepth));
    }
    ~DepthGuard() { --parser.depth_; }
    Parser& parser;
  };

  std::vector<Piece> pieces_;
  std::string_view name_;
  std::size_t piece_ = 0;
  std::span<const Token> tokens_;
  std::size_t token_ = 0;
  int depth_ = 0;
};

}  // namespace

Body parse_template(std::string_view source, std::string_view template_name) {
  Parser parser(split_template(source, template_name), template_name);
  return parser.parse();
}

}  // namespace glmrt::text::jinja
