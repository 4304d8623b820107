#include <glmrt/base/error.h>
#include <glmrt/text/jinja_template.h>

#include <algorithm>

#include "jinja_evaluator.h"
#include "utf8.h"

namespace glmrt::text {

struct JinjaTemplate::Parsed {
  jinja::Body body;
};

namespace {

// Python reads a template file as UTF-8 text: anything else never reaches Jinja2.
std::string_view utf8_template_source(std::string_view source, const std::string& name) {
  if (const auto bad = utf8::first_invalid(source))
    fail("{}: not UTF-8 text (an invalid byte sequence at byte {})", name, *bad);
  return source;
}

}  // namespace

JinjaTemplate::JinjaTemplate(std::string_view source, std::string name)
    : name_(std::move(name)),
      parsed_(std::make_shared<const Parsed>(
          Parsed{jinja::parse_template(utf8_template_source(source, name_), name_)})) {}

RenderedChat JinjaTemplate::render(const nlohmann::ordered_json& variables,
                                   std::span<const std::string_view> marked,
                                   const JinjaLimits& limits) const {
  if (!variables.is_object()) fail("{}: the template variables must be a JSON object", name_);
  auto globals =
      std::make_shared<jinja::Scope>(jinja::Scope{jinja::chat_template_globals(), nullptr});
  auto root = std::make_shared<jinja::Scope>(jinja::Scope{{}, globals});
  for (const auto& [key, value] : variables.items()) {
    const bool is_marked = std::find(marked.begin(), marked.end(), key) != marked.end();
    root->variables.set(key, jinja::from_json(value, is_marked));
  }
  jinja::Evaluator evaluator(name_, limits);
  jinja::MarkedText out = evaluator.render(parsed_->body, root);
  return RenderedChat{std::move(out.text), std::move(out.marks)};
}

}  // namespace glmrt::text
