// Runs a parsed template with Jinja2's scoping: a for loop's body is a new
// scope on each iteration (a `set` in it is gone on the next one), a macro
// call is a new scope over the one the macro was defined in, `if` opens none.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include <glmrt/text/jinja_template.h>

#include "jinja_ast.h"
#include "jinja_ops.h"

namespace glmrt::text::jinja {

struct Scope {
  Dict variables;
  std::shared_ptr<Scope> parent;
};
using ScopePtr = std::shared_ptr<Scope>;

class Evaluator {
 public:
  Evaluator(std::string_view template_name, JinjaLimits limits)
      : name_(template_name), limits_(limits) {}

  // Renders `body` with `root` as the template's top-level scope.
  MarkedText render(const Body& body, const ScopePtr& root);

  // Calls a macro defined by `macro` in `closure` (also from filters such as map).
  Value call_macro(const Node& macro, const ScopePtr& closure, CallArguments& args);

  // Throws glmrt::Error naming the template, line and construct.
  [[noreturn]] void raise(int line, std::string_view construct, std::string_view message) const;

  const std::string& template_name() const { return name_; }

 private:
  enum class Flow { normal, break_loop, continue_loop };

  Flow execute(const Body& body, const ScopePtr& scope, MarkedText& out);
  Flow execute_node(const Node& node, const ScopePtr& scope, MarkedText& out);
  Flow execute_for(const Node& node, const ScopePtr& scope, MarkedText& out);
  void execute_set(const Node& node, const ScopePtr& scope);
  void execute_call_block(const Node& node, const ScopePtr& scope, MarkedText& out);
  void define_macro(const Node& node, const ScopePtr& scope);

  Value evaluate(const Expr& expr, const ScopePtr& scope);
  Value evaluate_unlocated(const Expr& expr, const ScopePtr& scope);
  Value evaluate_call(const Expr& expr, const ScopePtr& scope, const Value* caller);
  CallArguments evaluate_arguments(const Expr& expr, std::size_t first, const ScopePtr& scope);
  Value lookup(const std::string& name, const ScopePtr& scope) const;
  void write(MarkedText& out, const MarkedText& text);

  std::string name_;
  JinjaLimits limits_;
  std::size_t written_ = 0;
  std::uint64_t iterations_ = 0;
  std::size_t built_ = 0;
  int call_depth_ = 0;
};

// The globals transformers gives a chat template: namespace(), range(),
// dict(), raise_exception(), strftime_now().
Dict chat_template_globals();

}  // namespace glmrt::text::jinja
