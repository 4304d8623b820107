// The parsed form of a Jinja template: expressions and statements, each with
// the line it starts on (for error messages).
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jinja_value.h"

namespace glmrt::text::jinja {

enum class ExprKind {
  literal,      // value
  name,         // name
  list,         // children
  tuple,        // children
  dict,         // children: key, value, key, value, ...
  attribute,    // children[0].name
  item,         // children[0][children[1]]
  slice,        // children[0][children[1]:children[2]:children[3]] (null = absent)
  call,         // children[0](children[1..], keywords)
  filter,       // children[0] | name(children[1..], keywords)
  test,         // children[0] is [not] name(children[1..])
  unary,        // name ("-", "+", "not") children[0]
  binary,       // children[0] name children[1]; "and"/"or" short-circuit
  conditional,  // children[0] if children[1] else children[2] (may be null)
};

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

struct Expr {
  ExprKind kind = ExprKind::literal;
  int line = 1;
  Value value;
  std::string name;
  bool negated = false;  // `is not`, `not in`
  std::vector<ExprPtr> children;
  std::vector<std::pair<std::string, ExprPtr>> keywords;
};

enum class NodeKind {
  text,        // text
  output,      // {{ expr }}
  if_chain,    // branches, else_body
  for_loop,    // targets in expr [if condition]: body, else_body
  set,         // targets (or attribute_target) = expr
  set_block,   // {% set targets[0] %}body{% endset %}
  macro,       // {% macro name(parameters) %}body
  call_block,  // {% call(parameters) expr %}body: the body is `caller`
  loop_break,
  loop_continue,
};

struct Node;
using Body = std::vector<std::unique_ptr<Node>>;

struct Branch {
  ExprPtr condition;
  Body body;
};

struct Parameter {
  std::string name;
  ExprPtr default_value;  // null when none
};

struct Node {
  NodeKind kind = NodeKind::text;
  int line = 1;
  std::string text;  // text, or the macro's name
  ExprPtr expr;
  ExprPtr condition;
  std::vector<std::string> targets;
  std::string attribute;  // `set ns.attribute`: targets[0] is ns
  std::vector<Branch> branches;
  std::vector<Parameter> parameters;
  Body body, else_body;
};

// Parses `source`; errors name `template_name`, the line and the construct.
Body parse_template(std::string_view source, std::string_view template_name);

}  // namespace glmrt::text::jinja
