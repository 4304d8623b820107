// What the grammar tests share: a machine for a schema given as JSON text,
// and byte strings run through it.
#pragma once

#include <glmrt/grammar/json_machine.h>

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <random>
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

/// Random walks over the bytes `allowed` keeps of those the automaton takes
/// (closing bytes three times in four, so objects end): none meets a dead
/// end, and each finished text parses and satisfies the schema. Returns how
/// many finished.
inline int random_walks(const std::shared_ptr<const JsonSchema>& schema, uint32_t seed, int walks,
                        int max_steps, const std::function<bool(int byte)>& allowed) {
  JsonMachine m(schema);
  std::mt19937 random(seed);
  int finished = 0;
  for (int walk = 0; walk < walks; ++walk) {
    StateRef state = m.start();
    std::string text;
    for (int step = 0; step < max_steps && !m.finished(state); ++step) {
      std::vector<std::pair<uint8_t, StateRef>> next, closing;
      const size_t mark = m.mark();
      for (int b = 0; b < 256; ++b) {
        if (!allowed(b)) continue;
        if (const StateRef s = m.step(state, static_cast<uint8_t>(b)); s != kRejected)
          next.push_back({static_cast<uint8_t>(b), s});
      }
      if (next.empty()) {
        ADD_FAILURE() << "dead end after `" << text << "`";
        return finished;
      }
      for (auto& n : next)
        if (std::string_view("\"}],:0123456789tfn").find(static_cast<char>(n.first)) !=
            std::string_view::npos)
          closing.push_back(n);
      const auto& pool = (!closing.empty() && random() % 4 != 0) ? closing : next;
      const auto choice = pool[random() % pool.size()];
      text += static_cast<char>(choice.first);
      // Keep the chosen state: reload it as the new base.
      const auto frames = m.snapshot(choice.second);
      m.release(mark);
      state = m.load(frames);
    }
    if (!m.finished(state)) continue;
    ++finished;
    const Json value = Json::parse(text, nullptr, false);
    EXPECT_FALSE(value.is_discarded()) << text;
    if (!value.is_discarded()) {
      EXPECT_EQ(schema->problem(value), std::nullopt) << text;
    }
  }
  return finished;
}

/// The refusal of a schema the compiler must refuse.
inline SchemaError schema_refusal(const char* schema) {
  try {
    JsonSchema::compile(Json::parse(schema));
  } catch (const SchemaError& e) {
    return e;
  }
  ADD_FAILURE() << "accepted: " << schema;
  return SchemaError("", "", "");
}

}  // namespace glmrt::grammar::testing
