#include <glmrt/serve/messages_response.h>

namespace glmrt::serve {
namespace {

// Anthropic's error types by status.
std::string anthropic_error_type(const ApiError& error) {
  switch (error.status()) {
    case 400:
      return "invalid_request_error";
    case 401:
      return "authentication_error";
    case 403:
      return "permission_error";
    case 404:
      return "not_found_error";
    case 413:
      return "request_too_large";
    case 429:
      return "rate_limit_error";
    case 503:
      return "overloaded_error";
    default:
      return error.status() >= 500 ? "api_error" : "invalid_request_error";
  }
}

Json usage_of(const ChatRequest& request, int64_t cached_tokens, int64_t output_tokens) {
  // Anthropic counts cache reads apart: the three input counts add up to the prompt.
  return {{"input_tokens", static_cast<int64_t>(request.prompt.size()) - cached_tokens},
          {"cache_creation_input_tokens", 0},
          {"cache_read_input_tokens", cached_tokens},
          {"output_tokens", output_tokens}};
}

Json tool_use_block(const ToolCall& call, IdSource& ids, Json input) {
  return {{"type", "tool_use"},
          {"id", call.id.empty() ? ids.next("toolu_") : call.id},
          {"name", call.name},
          {"input", std::move(input)}};
}

Json stop_sequence_of(const ChatTurn& turn) {
  return turn.stop_string.empty() ? Json(nullptr) : Json(turn.stop_string);
}

// The events of one streamed message: each piece of reasoning or text goes
// into the open block of its kind, a new block opening when the kind changes.
class MessageEvents {
 public:
  explicit MessageEvents(Job& job) : job_(job) {}

  void send(const Json& event) { job_.send(sse_event(event["type"].get<std::string>(), event)); }

  void delta(const ChatDelta& d) {
    if (!d.reasoning.empty()) piece(Kind::thinking, d.reasoning);
    if (!d.content.empty()) piece(Kind::text, d.content);
  }

  void close() {
    if (open_ == Kind::none) return;
    send({{"type", "content_block_stop"}, {"index", index_}});
    open_ = Kind::none;
    ++index_;
  }

  void tool_use(const ToolCall& call, IdSource& ids) {
    close();
    send({{"type", "content_block_start"},
          {"index", index_},
          {"content_block", tool_use_block(call, ids, Json::object())}});
    send({{"type", "content_block_delta"},
          {"index", index_},
          {"delta", {{"type", "input_json_delta"}, {"partial_json", call.arguments}}}});
    send({{"type", "content_block_stop"}, {"index", index_}});
    ++index_;
  }

 private:
  enum class Kind { none, thinking, text };

  void piece(Kind kind, const std::string& text) {
    if (open_ != kind) {
      close();
      const Json block = kind == Kind::thinking
                             ? Json{{"type", "thinking"}, {"thinking", ""}, {"signature", ""}}
                             : Json{{"type", "text"}, {"text", ""}};
      send({{"type", "content_block_start"}, {"index", index_}, {"content_block", block}});
      open_ = kind;
    }
    const Json delta = kind == Kind::thinking ? Json{{"type", "thinking_delta"}, {"thinking", text}}
                                              : Json{{"type", "text_delta"}, {"text", text}};
    send({{"type", "content_block_delta"}, {"index", index_}, {"delta", delta}});
  }

  Job& job_;
  Kind open_ = Kind::none;
  size_t index_ = 0;
};

}  // namespace

std::string anthropic_stop_reason(const ChatTurn& turn) {
  if (turn.cut()) return "max_tokens";
  if (!turn.stop_string.empty()) return "stop_sequence";
  return turn.calls.empty() ? "end_turn" : "tool_use";
}

Json anthropic_error_body(const ApiError& error) {
  return {{"type", "error"},
          {"error", {{"type", anthropic_error_type(error)}, {"message", error.what()}}}};
}

std::string anthropic_error_event(const ApiError& error) {
  return sse_event("error", anthropic_error_body(error));
}

Json call_input(const ToolCall& call) {
  Json input = Json::parse(call.arguments, nullptr, false);
  return input.is_object() ? input : Json::object();
}

void run_messages(const ChatRequest& request, const ResponseIdentity& identity,
                  const ServedModel& model, IdSource& ids, ModelContext& context, Job& job) {
  const Json message = {{"id", identity.id},        {"type", "message"},
                        {"role", "assistant"},      {"model", identity.model},
                        {"content", Json::array()}, {"stop_reason", nullptr},
                        {"stop_sequence", nullptr}};
  if (!request.generation.stream) {
    auto turn = run_chat_turn(request, 0, model, context, job);
    if (!turn) return;
    Json body = message;
    Json& content = body["content"];
    if (request.thinking && !turn->reasoning.empty())
      content.push_back({{"type", "thinking"}, {"thinking", turn->reasoning}, {"signature", ""}});
    if (!turn->content.empty()) content.push_back({{"type", "text"}, {"text", turn->content}});
    for (const ToolCall& call : turn->calls)
      content.push_back(tool_use_block(call, ids, call_input(call)));
    body["stop_reason"] = anthropic_stop_reason(*turn);
    body["stop_sequence"] = stop_sequence_of(*turn);
    body["usage"] = usage_of(request, turn->cached_tokens, turn->completion_tokens);
    body["timings"] = turn->timings.json();
    job.send_last(body.dump(-1, ' ', false, Json::error_handler_t::replace));
    return;
  }
  MessageEvents events(job);
  ChatTurnEvents hooks;
  hooks.prompt_done = [&] {
    Json start = message;
    start["usage"] = usage_of(request, 0, 0);
    events.send({{"type", "message_start"}, {"message", std::move(start)}});
    events.send({{"type", "ping"}});
  };
  hooks.delta = [&](const ChatDelta& delta, Json&) { events.delta(delta); };
  auto turn = run_chat_turn(request, 0, model, context, job, hooks);
  if (!turn) return;
  events.delta(turn->last);
  events.close();
  for (const ToolCall& call : turn->calls) events.tool_use(call, ids);
  Json usage = usage_of(request, turn->cached_tokens, turn->completion_tokens);
  events.send({{"type", "message_delta"},
               {"delta",
                {{"stop_reason", anthropic_stop_reason(*turn)},
                 {"stop_sequence", stop_sequence_of(*turn)}}},
               {"usage", std::move(usage)}});
  const Json stop = {{"type", "message_stop"}};
  job.send_last(sse_event("message_stop", stop));
}

}  // namespace glmrt::serve
