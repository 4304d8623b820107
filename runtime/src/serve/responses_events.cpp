#include <glmrt/serve/responses_events.h>

namespace glmrt::serve {
namespace {

Json response_object(const ResponsesRequest& request, const ResponseIdentity& identity,
                     std::string_view status, Json output) {
  Json response = {
      {"id", identity.id},       {"object", "response"},       {"created_at", identity.created},
      {"status", status},        {"error", nullptr},           {"incomplete_details", nullptr},
      {"model", identity.model}, {"output", std::move(output)}};
  for (const auto& [key, value] : request.settings.items()) response[key] = value;
  if (response["tools"].is_null()) response["tools"] = Json::array();
  if (response["tool_choice"].is_null()) response["tool_choice"] = "auto";
  if (response["parallel_tool_calls"].is_null()) response["parallel_tool_calls"] = true;
  response["store"] = false;
  return response;
}

// Completed, or incomplete when cut by max_output_tokens or a full context.
void finish_response(Json& response, const ChatRequest& request, const ChatTurn& turn) {
  response["status"] = turn.cut() ? "incomplete" : "completed";
  if (turn.cut()) response["incomplete_details"] = {{"reason", "max_output_tokens"}};
  const auto input = static_cast<int64_t>(request.prompt.size());
  response["usage"] = {{"input_tokens", input},
                       {"input_tokens_details", {{"cached_tokens", turn.cached_tokens}}},
                       {"output_tokens", turn.completion_tokens},
                       {"total_tokens", input + turn.completion_tokens}};
  response["timings"] = turn.timings.json();
}

Json reasoning_item(const std::string& id, const std::string& text) {
  Json summary = Json::array();
  if (!text.empty()) summary.push_back({{"type", "summary_text"}, {"text", text}});
  return {{"id", id}, {"type", "reasoning"}, {"summary", std::move(summary)}};
}

Json text_part(const std::string& text) {
  return {{"type", "output_text"}, {"text", text}, {"annotations", Json::array()}};
}

Json message_item(const std::string& id, std::string_view status, Json content) {
  return {{"id", id},
          {"type", "message"},
          {"status", status},
          {"role", "assistant"},
          {"content", std::move(content)}};
}

Json call_item(const std::string& id, std::string_view status, const std::string& call_id,
               const ToolCall& call, const std::string& arguments) {
  return {{"id", id},           {"type", "function_call"}, {"status", status},
          {"call_id", call_id}, {"name", call.name},       {"arguments", arguments}};
}

// An answer cut by max_output_tokens cut its last item short.
std::string_view last_status(const ChatTurn& turn, bool last) {
  return last && turn.cut() ? "incomplete" : "completed";
}

std::string call_id_of(const ToolCall& call, IdSource& ids) {
  return call.id.empty() ? ids.next("call_") : call.id;
}

// The events of one streamed response: the reasoning and the message are
// output items opened when their first text arrives and closed when the
// other kind starts or the answer ends.
class ResponseEvents {
 public:
  ResponseEvents(Job& job, IdSource& ids) : job_(job), ids_(ids) {}

  void send(Json event) {
    event["sequence_number"] = sequence_++;
    job_.send(sse_event(event["type"].get<std::string>(), event));
  }
  std::string last(Json event) {
    event["sequence_number"] = sequence_++;
    return sse_event(event["type"].get<std::string>(), event);
  }

  void delta(const ChatDelta& d) {
    if (!d.reasoning.empty()) piece(Kind::reasoning, d.reasoning);
    if (!d.content.empty()) piece(Kind::message, d.content);
  }

  void close(std::string_view status = "completed") {
    if (open_ == Kind::none) return;
    const Json where = {{"item_id", item_id_}, {"output_index", index_}};
    Json item;
    if (open_ == Kind::reasoning) {
      const Json part = {{"type", "summary_text"}, {"text", text_}};
      send(with(where, {{"type", "response.reasoning_summary_text.done"},
                        {"summary_index", 0},
                        {"text", text_}}));
      send(with(where, {{"type", "response.reasoning_summary_part.done"},
                        {"summary_index", 0},
                        {"part", part}}));
      item = reasoning_item(item_id_, text_);
    } else {
      send(with(where, {{"type", "response.output_text.done"},
                        {"content_index", 0},
                        {"text", text_},
                        {"logprobs", Json::array()}}));
      send(with(where, {{"type", "response.content_part.done"},
                        {"content_index", 0},
                        {"part", text_part(text_)}}));
      item = message_item(item_id_, status, Json::array({text_part(text_)}));
    }
    send({{"type", "response.output_item.done"}, {"output_index", index_}, {"item", item}});
    output_.push_back(std::move(item));
    open_ = Kind::none;
    text_.clear();
    ++index_;
  }

  void call(const ToolCall& call, std::string_view status) {
    close();
    const std::string id = ids_.next("fc_"), call_id = call_id_of(call, ids_);
    const Json where = {{"item_id", id}, {"output_index", index_}};
    send({{"type", "response.output_item.added"},
          {"output_index", index_},
          {"item", call_item(id, "in_progress", call_id, call, "")}});
    send(with(where,
              {{"type", "response.function_call_arguments.delta"}, {"delta", call.arguments}}));
    send(with(where, {{"type", "response.function_call_arguments.done"},
                      {"name", call.name},
                      {"arguments", call.arguments}}));
    Json item = call_item(id, status, call_id, call, call.arguments);
    send({{"type", "response.output_item.done"}, {"output_index", index_}, {"item", item}});
    output_.push_back(std::move(item));
    ++index_;
  }

  Json& output() { return output_; }

 private:
  enum class Kind { none, reasoning, message };

  static Json with(const Json& where, Json event) {
    for (const auto& [key, value] : where.items()) event[key] = value;
    return event;
  }

  void piece(Kind kind, const std::string& text) {
    if (open_ != kind) {
      close();
      open_ = kind;
      item_id_ = ids_.next(kind == Kind::reasoning ? "rs_" : "msg_");
      const Json where = {{"item_id", item_id_}, {"output_index", index_}};
      if (kind == Kind::reasoning) {
        send({{"type", "response.output_item.added"},
              {"output_index", index_},
              {"item", reasoning_item(item_id_, "")}});
        send(with(where, {{"type", "response.reasoning_summary_part.added"},
                          {"summary_index", 0},
                          {"part", {{"type", "summary_text"}, {"text", ""}}}}));
      } else {
        send({{"type", "response.output_item.added"},
              {"output_index", index_},
              {"item", message_item(item_id_, "in_progress", Json::array())}});
        send(with(where, {{"type", "response.content_part.added"},
                          {"content_index", 0},
                          {"part", text_part("")}}));
      }
    }
    text_ += text;
    const Json where = {{"item_id", item_id_}, {"output_index", index_}};
    if (kind == Kind::reasoning) {
      send(with(where, {{"type", "response.reasoning_summary_text.delta"},
                        {"summary_index", 0},
                        {"delta", text}}));
    } else {
      send(with(where, {{"type", "response.output_text.delta"},
                        {"content_index", 0},
                        {"delta", text},
                        {"logprobs", Json::array()}}));
    }
  }

  Job& job_;
  IdSource& ids_;
  int64_t sequence_ = 0;
  Kind open_ = Kind::none;
  std::string item_id_, text_;
  size_t index_ = 0;
  Json output_ = Json::array();
};

}  // namespace

std::string responses_error_event(const ApiError& error) {
  Json event = error_body(error);
  event["type"] = "error";
  return sse_event("error", event);
}

void run_responses(const ResponsesRequest& request, const ResponseIdentity& identity,
                   const ServedModel& model, IdSource& ids, ModelContext& context, Job& job) {
  const ChatRequest& chat = request.chat;
  if (!chat.generation.stream) {
    auto turn = run_chat_turn(chat, 0, model, context, job);
    if (!turn) return;
    Json output = Json::array();
    if (chat.thinking && !turn->reasoning.empty())
      output.push_back(reasoning_item(ids.next("rs_"), turn->reasoning));
    if (!turn->content.empty())
      output.push_back(message_item(ids.next("msg_"), last_status(*turn, turn->calls.empty()),
                                    Json::array({text_part(turn->content)})));
    for (size_t i = 0; i < turn->calls.size(); ++i)
      output.push_back(call_item(ids.next("fc_"), last_status(*turn, i + 1 == turn->calls.size()),
                                 call_id_of(turn->calls[i], ids), turn->calls[i],
                                 turn->calls[i].arguments));
    Json response = response_object(request, identity, "completed", std::move(output));
    finish_response(response, chat, *turn);
    job.send_last(response.dump(-1, ' ', false, Json::error_handler_t::replace));
    return;
  }
  ResponseEvents events(job, ids);
  ChatTurnEvents hooks;
  hooks.prompt_done = [&] {
    const Json response = response_object(request, identity, "in_progress", Json::array());
    events.send({{"type", "response.created"}, {"response", response}});
    events.send({{"type", "response.in_progress"}, {"response", response}});
  };
  hooks.delta = [&](const ChatDelta& delta, Json&) { events.delta(delta); };
  auto turn = run_chat_turn(chat, 0, model, context, job, hooks);
  if (!turn) return;
  events.delta(turn->last);
  events.close(last_status(*turn, turn->calls.empty()));
  for (size_t i = 0; i < turn->calls.size(); ++i)
    events.call(turn->calls[i], last_status(*turn, i + 1 == turn->calls.size()));
  Json response = response_object(request, identity, "completed", std::move(events.output()));
  finish_response(response, chat, *turn);
  const std::string type = turn->cut() ? "response.incomplete" : "response.completed";
  job.send_last(events.last({{"type", type}, {"response", std::move(response)}}));
}

}  // namespace glmrt::serve
