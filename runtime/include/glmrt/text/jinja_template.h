// A Jinja2 template rendered with Python Jinja2's semantics as transformers'
// apply_chat_template sets it up: trim_blocks and lstrip_blocks, loop
// controls, `{% generation %}` passed through, `tojson` as json.dumps
// (ensure_ascii off), the globals namespace(), range(), dict(),
// raise_exception() and strftime_now(). docs/chat.md lists what it covers.
#pragma once

#include <glmrt/text/chat_template.h>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace glmrt::text {

/// What one render may use up before it stops with an error naming the
/// template: a hostile template cannot hang or exhaust the machine.
struct JinjaLimits {
  std::size_t max_output_bytes = std::size_t{64} << 20;  // all text written, macros' included
  int max_call_depth = 256;                              // nested macro calls
  std::uint64_t max_loop_iterations = 10'000'000;        // all loops together
  std::size_t max_built_bytes = std::size_t{1} << 30;    // all strings expressions produce
};

class JinjaTemplate {
 public:
  /// Parses `source`. `name` is how errors name it (the file, or the file
  /// and key). A syntax error is a glmrt::Error naming it, the line and the
  /// construct.
  JinjaTemplate(std::string_view source, std::string name);

  /// Renders with the members of `variables` (a JSON object) as top-level
  /// variables. The strings of the variables named in `marked` (the
  /// request's own text: messages, tools) are marked in the result, wherever
  /// the template copies them. Errors (Jinja2's, raise_exception(), the
  /// bounds on output size, loops and call depth) name the template, line
  /// and construct.
  RenderedChat render(const nlohmann::ordered_json& variables,
                      std::span<const std::string_view> marked = {},
                      const JinjaLimits& limits = {}) const;

  const std::string& name() const { return name_; }

 private:
  struct Parsed;
  std::string name_;
  std::shared_ptr<const Parsed> parsed_;
};

}  // namespace glmrt::text
