// GET /props and GET /slots, shaped as llama-server answers them (the fields
// glmrt has): clients and front-ends that read them to learn the context
// size, the slot count, the chat template and the default sampling find them.
// Read from the model thread's published snapshot, never from the sessions.
#include "server_state.h"

namespace glmrt::serve {
namespace {

void respond_json(httplib::Response& res, const Json& body) {
  res.set_content(body.dump(-1, ' ', false, Json::error_handler_t::replace), "application/json");
}

// llama-server's `params` of a slot: the sampling a request gets by default.
Json default_params(const ServerState& state) {
  const SamplingParams& d = state.defaults;
  const int max_tokens = state.options.limits.max_tokens;
  return {{"n_predict", max_tokens > 0 ? max_tokens : -1},  // -1: until the turn ends
          {"seed", d.seed},
          {"temperature", d.temperature},
          {"top_k", d.top_k},
          {"top_p", d.top_p},
          {"min_p", d.min_p},
          {"repeat_penalty", d.repetition_penalty},
          {"presence_penalty", d.presence_penalty},
          {"frequency_penalty", d.frequency_penalty},
          {"stop", Json::array()}};
}

Json slot_json(const ServerState& state, const ModelSnapshot& snapshot, int64_t id,
               bool processing) {
  const size_t index = static_cast<size_t>(id);
  return {
      {"id", id},
      {"id_task", -1},
      {"n_ctx", state.engine.profile().max_context},
      {"speculative", snapshot.draft.has_value()},
      {"is_processing", processing},
      {"n_cached_tokens", index < snapshot.slot_tokens.size() ? snapshot.slot_tokens[index] : 0},
      {"params", default_params(state)}};
}

void props(ServerState& state, httplib::Response& res) {
  const ModelSnapshot snapshot = state.metrics.snapshot();
  Json settings = slot_json(state, snapshot, 0, false);
  settings.erase("n_cached_tokens");
  respond_json(res, {{"default_generation_settings", std::move(settings)},
                     {"total_slots", snapshot.slots},
                     {"model_path", state.engine.model_dir().string()},
                     {"model_alias", state.model.name},
                     {"chat_template", state.chat_template.tools_text()},
                     {"chat_template_source", state.chat_template.source()},
                     {"modalities", {{"vision", false}, {"audio", false}}},
                     {"build_info", state.options.build_info}});
}

void slots(ServerState& state, httplib::Response& res) {
  const ModelSnapshot snapshot = state.metrics.snapshot();
  const std::set<int64_t> processing = state.metrics.processing_slots();
  Json list = Json::array();
  for (int64_t id = 0; id < snapshot.slots; ++id)
    list.push_back(slot_json(state, snapshot, id, processing.contains(id)));
  respond_json(res, list);
}

}  // namespace

void register_info_routes(ServerState& state) {
  state.http.Get("/props",
                 [&state](const httplib::Request&, httplib::Response& res) { props(state, res); });
  state.http.Get("/slots",
                 [&state](const httplib::Request&, httplib::Response& res) { slots(state, res); });
}

}  // namespace glmrt::serve
