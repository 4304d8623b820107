#include "jinja_evaluator.h"

#include <glmrt/base/error.h>
#include <glmrt/base/printable.h>

namespace glmrt::text::jinja {
namespace {

std::string construct_of(const Expr& e) {
  switch (e.kind) {
    case ExprKind::binary:
      return fmt::format("`{}`", e.negated ? "not in" : e.name);
    case ExprKind::unary:
      return fmt::format("`{}`", e.name);
    case ExprKind::filter:
      return fmt::format("filter `{}`", e.name);
    case ExprKind::test:
      return fmt::format("test `{}`", e.name);
    case ExprKind::attribute:
      return fmt::format("`.{}`", e.name);
    case ExprKind::call:
      if (e.children[0]->kind == ExprKind::name || e.children[0]->kind == ExprKind::attribute)
        return fmt::format("call of `{}`", e.children[0]->name);
      return "a call";
    case ExprKind::item:
      return "a subscript";
    case ExprKind::slice:
      return "a slice";
    case ExprKind::name:
      return fmt::format("`{}`", e.name);
    default:
      return "an expression";
  }
}

}  // namespace

void Evaluator::raise(int line, std::string_view construct, std::string_view message) const {
  fail("{}:{}: {}: {}", name_, line, construct, message);
}

MarkedText Evaluator::render(const Body& body, const ScopePtr& root) {
  MarkedText out;
  const Flow flow = execute(body, root, out);
  if (flow != Flow::normal) raise(0, "{% break %}", "used outside a loop");
  return out;
}

void Evaluator::write(MarkedText& out, const MarkedText& text) {
  written_ += text.text.size();
  if (written_ > limits_.max_output_bytes)
    fail("{}: the render wrote more than {} MiB (the bound on a chat template's output)", name_,
         limits_.max_output_bytes >> 20);
  out.append(text);
}

Evaluator::Flow Evaluator::execute(const Body& body, const ScopePtr& scope, MarkedText& out) {
  for (const auto& node : body) {
    const Flow flow = execute_node(*node, scope, out);
    if (flow != Flow::normal) return flow;
  }
  return Flow::normal;
}

Evaluator::Flow Evaluator::execute_node(const Node& node, const ScopePtr& scope, MarkedText& out) {
  switch (node.kind) {
    case NodeKind::text:
      write(out, MarkedText{node.text, {}});
      return Flow::normal;
    case NodeKind::output:
      write(out, to_text(evaluate(*node.expr, scope)));
      return Flow::normal;
    case NodeKind::if_chain:
      for (const Branch& branch : node.branches)
        if (truthy(evaluate(*branch.condition, scope))) return execute(branch.body, scope, out);
      return execute(node.else_body, scope, out);
    case NodeKind::for_loop:
      return execute_for(node, scope, out);
    case NodeKind::set:
    case NodeKind::set_block:
      execute_set(node, scope);
      return Flow::normal;
    case NodeKind::macro:
      define_macro(node, scope);
      return Flow::normal;
    case NodeKind::call_block:
      execute_call_block(node, scope, out);
      return Flow::normal;
    case NodeKind::loop_break:
      return Flow::break_loop;
    case NodeKind::loop_continue:
      return Flow::continue_loop;
  }
  return Flow::normal;
}

namespace {

void bind_targets(Evaluator& ev, const Node& node, Dict& variables, const Value& item) {
  if (node.targets.size() == 1) {
    variables.set(node.targets[0], item);
    return;
  }
  std::vector<Value> parts;
  try {
    parts = iterate(item);
  } catch (const Problem& p) {
    ev.raise(node.line, "unpacking", p.what());
  }
  if (parts.size() != node.targets.size())
    ev.raise(
        node.line, "unpacking",
        fmt::format("expected {} values to unpack, got {}", node.targets.size(), parts.size()));
  for (std::size_t i = 0; i < parts.size(); ++i) variables.set(node.targets[i], parts[i]);
}

Value loop_object(const std::vector<Value>& items, std::size_t i) {
  const auto n = static_cast<std::int64_t>(items.size());
  const auto index = static_cast<std::int64_t>(i);
  Dict loop;
  loop.items = {{"index", index + 1},
                {"index0", index},
                {"revindex", n - index},
                {"revindex0", n - index - 1},
                {"first", i == 0},
                {"last", index == n - 1},
                {"length", n},
                {"depth", 1},
                {"depth0", 0},
                {"previtem", i > 0 ? items[i - 1] : Value(Undefined{"loop.previtem"})},
                {"nextitem", index + 1 < n ? items[i + 1] : Value(Undefined{"loop.nextitem"})}};
  loop.items.emplace_back("cycle", std::make_shared<Callable>(Callable{
                                       "loop.cycle", [i](Evaluator&, CallArguments& a) {
                                         if (a.positional.empty())
                                           problem("loop.cycle() needs at least one value");
                                         return a.positional[i % a.positional.size()];
                                       }}));
  return Value::dict(std::move(loop));
}

}  // namespace

Evaluator::Flow Evaluator::execute_for(const Node& node, const ScopePtr& scope, MarkedText& out) {
  const Value iterable = evaluate(*node.expr, scope);
  std::vector<Value> items;
  try {
    items = iterate(iterable);
  } catch (const Problem& p) {
    raise(node.line, "{% for %}", p.what());
  }
  if (node.condition) {
    std::vector<Value> kept;
    for (const Value& item : items) {
      auto filter_scope = std::make_shared<Scope>(Scope{{}, scope});
      bind_targets(*this, node, filter_scope->variables, item);
      if (truthy(evaluate(*node.condition, filter_scope))) kept.push_back(item);
    }
    items = std::move(kept);
  }
  if (items.empty()) {
    execute(node.else_body, std::make_shared<Scope>(Scope{{}, scope}), out);
    return Flow::normal;
  }
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (++iterations_ > limits_.max_loop_iterations)
      raise(
          node.line, "{% for %}",
          fmt::format("the render ran more than {} loop iterations", limits_.max_loop_iterations));
    auto body_scope = std::make_shared<Scope>(Scope{{}, scope});
    bind_targets(*this, node, body_scope->variables, items[i]);
    body_scope->variables.set("loop", loop_object(items, i));
    if (execute(node.body, body_scope, out) == Flow::break_loop) break;
  }
  return Flow::normal;
}

void Evaluator::execute_set(const Node& node, const ScopePtr& scope) {
  Value value;
  if (node.kind == NodeKind::set_block) {
    MarkedText text;
    execute(node.body, std::make_shared<Scope>(Scope{{}, scope}), text);
    value = std::move(text);
  } else {
    value = evaluate(*node.expr, scope);
  }
  if (!node.attribute.empty()) {
    const Value target = lookup(node.targets[0], scope);
    if (!target.is<NamespacePtr>())
      raise(node.line, "{% set %}",
            fmt::format("cannot assign the attribute `{}` of `{}`, a {} and not a namespace()",
                        node.attribute, node.targets[0], python_type_name(target)));
    if (holds(value, target.as<NamespacePtr>().get()))
      raise(node.line, "{% set %}",
            fmt::format("`{}.{}` would hold the namespace itself (a reference cycle)",
                        node.targets[0], node.attribute));
    target.as<NamespacePtr>()->attributes.set(node.attribute, std::move(value));
    return;
  }
  bind_targets(*this, node, scope->variables, value);
}

void Evaluator::define_macro(const Node& node, const ScopePtr& scope) {
  const Node* macro = &node;             // the template outlives every render
  std::weak_ptr<Scope> closure = scope;  // the macro lives in that scope: no cycle
  scope->variables.set(
      node.text, std::make_shared<Callable>(
                     Callable{node.text, [macro, closure](Evaluator& ev, CallArguments& args) {
                                const ScopePtr defined_in = closure.lock();
                                if (!defined_in) problem("the macro outlived its scope");
                                return ev.call_macro(*macro, defined_in, args);
                              }}));
}

Value Evaluator::call_macro(const Node& macro, const ScopePtr& closure, CallArguments& args) {
  if (call_depth_ >= limits_.max_call_depth)
    raise(macro.line, fmt::format("macro `{}`", macro.text),
          fmt::format("calls nest more than {} deep", limits_.max_call_depth));
  struct DepthCount {
    int& depth;
    explicit DepthCount(int& d) : depth(d) { ++depth; }
    ~DepthCount() { --depth; }
  } count(call_depth_);
  auto scope = std::make_shared<Scope>(Scope{{}, closure});
  if (args.positional.size() > macro.parameters.size())
    problem("macro '{}' takes not more than {} argument(s)", macro.text, macro.parameters.size());
  for (std::size_t i = 0; i < macro.parameters.size(); ++i) {
    const Parameter& p = macro.parameters[i];
    if (args.has(i, p.name))
      scope->variables.set(p.name, args.take(i, p.name));
    else if (p.default_value)
      scope->variables.set(p.name, evaluate(*p.default_value, scope));
    else
      scope->variables.set(p.name, Undefined{p.name});
  }
  for (const auto& keyword : args.keyword) {
    // Named, not a structured binding: clang 14 cannot capture one in a lambda.
    const auto& key = keyword.first;
    const auto& value = keyword.second;
    const bool known =
        key == "caller" || std::any_of(macro.parameters.begin(), macro.parameters.end(),
                                       [&](const Parameter& p) { return p.name == key; });
    if (!known) problem("macro '{}' takes no keyword argument '{}'", macro.text, key);
    if (key == "caller") scope->variables.set(key, value);
  }
  MarkedText out;
  if (execute(macro.body, scope, out) != Flow::normal)
    raise(macro.line, fmt::format("macro `{}`", macro.text),
          "`break` or `continue` outside a loop");
  return out;
}

void Evaluator::execute_call_block(const Node& node, const ScopePtr& scope, MarkedText& out) {
  const Node* block = &node;
  std::weak_ptr<Scope> weak_scope = scope;
  const Value caller = std::make_shared<Callable>(Callable{
      "caller", [block, weak_scope](Evaluator& ev, CallArguments& args) -> Value {
        const ScopePtr outer = weak_scope.lock();
        if (!outer) problem("caller() outlived its scope");
        auto inner = std::make_shared<Scope>(Scope{{}, outer});
        for (std::size_t i = 0; i < block->parameters.size(); ++i)
          inner->variables.set(block->parameters[i].name, args.take(i, block->parameters[i].name));
        MarkedText text;
        ev.execute(block->body, inner, text);
        return text;
      }});
  write(out, to_text(evaluate_call(*node.expr, scope, &caller)));
}

Value Evaluator::lookup(const std::string& name, const ScopePtr& scope) const {
  for (const Scope* s = scope.get(); s; s = s->parent.get())
    if (const Value* v = s->variables.find(name)) return *v;
  return Undefined{name};
}

Value Evaluator::evaluate(const Expr& expr, const ScopePtr& scope) {
  Value result;
  try {
    result = evaluate_unlocated(expr, scope);
  } catch (const Problem& p) {
    raise(expr.line, construct_of(expr), p.what());
  }
  // Strings built in a loop (`ns.s = ns.s ~ ns.s`) are work the output bound
  // does not see: count what operators, filters, calls and slices make.
  const bool builds = expr.kind == ExprKind::binary || expr.kind == ExprKind::filter ||
                      expr.kind == ExprKind::call || expr.kind == ExprKind::slice;
  if (builds && result.is_string()) {
    built_ += result.text().size();
    if (built_ > limits_.max_built_bytes)
      raise(expr.line, construct_of(expr),
            fmt::format("the render built more than {} MiB of strings",
                        limits_.max_built_bytes >> 20));
  }
  return result;
}

CallArguments Evaluator::evaluate_arguments(const Expr& expr, std::size_t first,
                                            const ScopePtr& scope) {
  CallArguments args;
  for (std::size_t i = first; i < expr.children.size(); ++i)
    args.positional.push_back(evaluate(*expr.children[i], scope));
  for (const auto& [key, value] : expr.keywords)
    args.keyword.emplace_back(key, evaluate(*value, scope));
  return args;
}

Value Evaluator::evaluate_call(const Expr& expr, const ScopePtr& scope, const Value* caller) {
  const Value callee = evaluate(*expr.children[0], scope);
  CallArguments args = evaluate_arguments(expr, 1, scope);
  if (caller) args.keyword.emplace_back("caller", *caller);
  try {
    if (callee.is_undefined()) problem("'{}' is undefined", callee.as<Undefined>().name);
    if (!callee.is<CallablePtr>()) problem("'{}' object is not callable", python_type_name(callee));
    return callee.as<CallablePtr>()->function(*this, args);
  } catch (const Problem& p) {
    raise(expr.line, construct_of(expr), p.what());
  }
}

Value Evaluator::evaluate_unlocated(const Expr& e, const ScopePtr& scope) {
  switch (e.kind) {
    case ExprKind::literal:
      return e.value;
    case ExprKind::name:
      return lookup(e.name, scope);
    case ExprKind::list:
    case ExprKind::tuple: {
      std::vector<Value> items;
      for (const auto& child : e.children) items.push_back(evaluate(*child, scope));
      return Value::list(std::move(items));
    }
    case ExprKind::dict: {
      Dict d;
      for (std::size_t i = 0; i + 1 < e.children.size(); i += 2) {
        const Value key = evaluate(*e.children[i], scope);
        if (!key.is_string())
          problem("dict keys must be str here, not '{}'", python_type_name(key));
        d.set(key.text(), evaluate(*e.children[i + 1], scope));
      }
      return Value::dict(std::move(d));
    }
    case ExprKind::attribute:
      return get_attribute(evaluate(*e.children[0], scope), e.name);
    case ExprKind::item:
      return get_item(evaluate(*e.children[0], scope), evaluate(*e.children[1], scope));
    case ExprKind::slice: {
      const Value target = evaluate(*e.children[0], scope);
      Value parts[3];
      for (int i = 0; i < 3; ++i)
        if (e.children[1 + i]) parts[i] = evaluate(*e.children[1 + i], scope);
      return slice(target, parts[0], parts[1], parts[2]);
    }
    case ExprKind::call:
      return evaluate_call(e, scope, nullptr);
    case ExprKind::filter: {
      const Value value = evaluate(*e.children[0], scope);
      return apply_filter(e.name, value, evaluate_arguments(e, 1, scope));
    }
    case ExprKind::test: {
      const Value value = evaluate(*e.children[0], scope);
      return apply_test(e.name, value, evaluate_arguments(e, 1, scope)) != e.negated;
    }
    case ExprKind::unary: {
      const Value operand = evaluate(*e.children[0], scope);
      if (e.name == "not") return !truthy(operand);
      if (e.name == "-") return negate(operand);
      if (!operand.is_number())
        problem("bad operand type for unary +: '{}'", python_type_name(operand));
      return operand;
    }
    case ExprKind::binary: {
      const Value left = evaluate(*e.children[0], scope);
      if (e.name == "and") return truthy(left) ? evaluate(*e.children[1], scope) : left;
      if (e.name == "or") return truthy(left) ? left : evaluate(*e.children[1], scope);
      const Value right = evaluate(*e.children[1], scope);
      if (e.name == "in") return contains(right, left) != e.negated;
      return binary_operation(e.name, left, right);
    }
    case ExprKind::conditional:
      if (truthy(evaluate(*e.children[1], scope))) return evaluate(*e.children[0], scope);
      return e.children[2] ? evaluate(*e.children[2], scope) : Value(Undefined{"else"});
  }
  return Undefined{};
}

}  // namespace glmrt::text::jinja
