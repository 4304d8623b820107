// What the grammar tests share: a machine for a schema given as JSON text,
// and byte strings run through it.
#pragma once

#include <glmrt/grammar/json_machine.h>

#include <memory>
#include <string>
#include <string_view>

namespace glmrt::grammar::testing {

inline std::shared_ptr<const JsonSchema> schema_of(std::string_view schema_json) {
  return std::make_shared<const JsonSchema>(JsonSchema::compile(Json::parse(schema_json)));
}

/// How many bytes of `text` the machine takes before refusing one (all of
/// them when it refuses none), and whether the text is then a complete value.
struct Run {
  size_t taken = 0;
  bool complete = false;
  bool finished = false;
};

inline Run run(JsonMachine& machine, std::string_view text) {
  Run r;
  StateRef state = machine.start();
  for (const char c : text) {
    const StateRef next = machine.step(state, static_cast<uint8_t>(c));
    if (next == kRejected) return r;
    state = next;
    ++r.taken;
  }
  r.complete = machine.accepting(state);
  r.finished = machine.finished(state);
  return r;
}

}  // namespace glmrt::grammar::testing
