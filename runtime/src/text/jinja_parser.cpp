// The statements of a template: text, `{{ }}` and `{% %}` tags nested into a
// tree (expressions: jinja_expression_parser.cpp).
#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>

#include "jinja_ast.h"
#include "jinja_expression_parser.h"
#include "jinja_lexer.h"

namespace glmrt::text::jinja {
namespace {

class Parser : public ExpressionParser {
 public:
  Parser(std::vector<Piece> pieces, std::string_view name)
      : ExpressionParser(name), pieces_(std::move(pieces)) {}

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
      reset(piece.tokens);
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

  int line() const { return piece_ < pieces_.size() ? pieces_[piece_].line : 0; }

  std::vector<Piece> pieces_;
  std::size_t piece_ = 0;
};

}  // namespace

Body parse_template(std::string_view source, std::string_view template_name) {
  Parser parser(split_template(source, template_name), template_name);
  return parser.parse();
}

}  // namespace glmrt::text::jinja
