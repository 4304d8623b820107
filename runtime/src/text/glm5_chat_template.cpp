// The GLM-5 chat format. Mirrors, construct by construct, the Jinja template
// GLM-5 models ship (see docs/tokenizer.md), including its Python/Jinja2
// quirks: `{{ none }}` prints "None", assistant text is strip()ped, tool
// results are reordered to follow the assistant's tool_calls ids when that
// is unambiguous.
#include <glmrt/base/error.h>
#include <glmrt/base/json_nesting.h>
#include <glmrt/text/chat_template.h>

#include <algorithm>
#include <optional>
#include <string_view>
#include <vector>

#include "python_values.h"

namespace glmrt::text {

namespace {

using Value = nlohmann::ordered_json;
using python::truthy;

// `obj.key` in Jinja: nullptr when obj is not a mapping or lacks the key.
const Value* member(const Value& obj, std::string_view key) {
  if (!obj.is_object()) return nullptr;
  const auto it = obj.find(key);
  return it == obj.end() ? nullptr : &*it;
}

bool member_truthy(const Value& obj, std::string_view key) {
  const Value* v = member(obj, key);
  return v && truthy(*v);
}

// `'function' in tool` then `tool = tool['function']`.
const Value& unwrap_function(const Value& tool) {
  const Value* function = member(tool, "function");
  return function ? *function : tool;
}

// `x.0.key` for a list x whose first item is a mapping.
const Value* first_item_member(const Value* list, std::string_view key) {
  if (!list || !list->is_array() || list->empty()) return nullptr;
  return member((*list)[0], key);
}

bool first_item_is_tool_reference(const Value* list) {
  const Value* type = first_item_member(list, "type");
  return list && truthy(*list) && type && *type == "tool_reference";
}

class Glm5Renderer {
 public:
  explicit Glm5Renderer(const Value& request) : request_(request) {
    const Value* messages = member(request, "messages");
    if (!messages || !messages->is_array()) fail("chat request: 'messages' must be an array");
    messages_ = messages;
    for (std::size_t i = 0; i < messages_->size(); ++i)
      if (!(*messages_)[i].is_object()) fail("chat request: messages[{}] must be an object", i);
    const Value* tools = member(request, "tools");
    if (tools && truthy(*tools)) {
      if (!tools->is_array()) fail("chat request: 'tools' must be an array");
      for (std::size_t i = 0; i < tools->size(); ++i)
        if (!(*tools)[i].is_object()) fail("chat request: tools[{}] must be an object", i);
      tools_ = tools;
    }
  }

  RenderedChat render() {
    out_ = "[gMASK]<sop>";
    const Value* effort = option("reasoning_effort");
    out_ += "<|system|>Reasoning Effort: ";
    out_ += effort && *effort == "low" ? "Low" : effort && *effort == "high" ? "High" : "Max";
    const Value* clear = option("clear_thinking");
    clear_thinking_ = clear && truthy(*clear);
    if (tools_) render_tool_definitions();

    std::optional<std::size_t> last_user;
    for (std::size_t i = 0; i < messages_->size(); ++i)
      if (role(i) == "user") last_user = i;
    for (std::size_t i = 0; i < messages_->size(); ++i) {
      const Value& m = (*messages_)[i];
      const std::string_view r = role(i);
      if (r == "user") {
        out_ += "<|user|>";
        append_visible_text(member(m, "content"));
      } else if (r == "assistant") {
        render_assistant(m, !last_user || i > *last_user, i);
      } else if (r == "tool") {
        if (i == 0 || role(i - 1) != "tool") render_tool_block(i);
      } else if (r == "system") {
        out_ += "<|system|>";
        append_visible_text(member(m, "content"));
      }
    }
    const Value* generation = option("add_generation_prompt");
    if (!generation || truthy(*generation)) {
      const Value* thinking = option("enable_thinking");
      out_ += (!thinking || truthy(*thinking)) ? "<|assistant|><think>"
                                               : "<|assistant|><think></think>";
    }
    return {std::move(out_), std::move(content_)};
  }

 private:
  // A template variable: chat_template_kwargs first, then the request body.
  const Value* option(std::string_view name) const {
    if (const Value* kwargs = member(request_, "chat_template_kwargs"))
      if (const Value* v = member(*kwargs, name)) return v;
    return member(request_, name);
  }

  std::string_view role(std::size_t i) const {
    const Value* r = member((*messages_)[i], "role");
    return r && r->is_string() ? std::string_view(r->get_ref<const std::string&>()) : "";
  }

  // Text the request supplied (message content, tool definitions and
  // arguments): marked so the tokenizer reads it as plain text.
  void append_content(std::string_view text) {
    if (!text.empty()) content_.push_back({out_.size(), out_.size() + text.size()});
    out_ += text;
  }

  // The template's visible_text macro, as pieces: the content's own text
  // (`plain`) and the placeholders the template puts for media.
  struct VisiblePiece {
    std::string text;
    bool plain = true;
  };
  static std::vector<VisiblePiece> visible_pieces(const Value* content) {
    if (!content) return {};  // Jinja2 iterates an undefined value as empty
    if (content->is_string()) return {{content->get<std::string>()}};
    if (!content->is_array()) return {{python::str(*content)}};
    std::vector<VisiblePiece> pieces;
    for (const Value& item : *content) {
      if (item.is_string()) {
        pieces.push_back({item.get<std::string>()});
        continue;
      }
      const Value* type = member(item, "type");
      if (!type || !type->is_string()) continue;
      const std::string& t = type->get_ref<const std::string&>();
      if (t == "text") {
        const Value* part = member(item, "text");
        if (part) pieces.push_back({python::str(*part)});
      } else if (t == "image" || t == "image_url") {
        pieces.push_back({"<|begin_of_image|><|image|><|end_of_image|>", false});
      } else if (t == "video" || t == "video_url") {
        pieces.push_back({"<|begin_of_video|><|video|><|end_of_video|>", false});
      } else if (t == "audio" || t == "audio_url" || t == "input_audio") {
        pieces.push_back({"<|begin_of_audio|><|end_of_audio|>", false});
      }
    }
    return pieces;
  }

  static std::string visible_text(const Value* content) {
    std::string text;
    for (const VisiblePiece& piece : visible_pieces(content)) text += piece.text;
    return text;
  }

  void append_visible_text(const Value* content) {
    for (const VisiblePiece& piece : visible_pieces(content)) {
      if (piece.plain) {
        append_content(piece.text);
      } else {
        out_ += piece.text;
      }
    }
  }

  static std::string tool_to_json(const Value& tool) {
    std::string json = "{";
    bool first = true;
    for (const auto& [key, value] : tool.items()) {
      if (key == "defer_loading" || key == "strict") continue;
      if (!first) json += ", ";
      first = false;
      json += "\"" + key + "\": " + python::json_dumps(value);
    }
    return json + "}";
  }

  void render_tool_definitions() {
    out_ +=
        "<|system|>\n# Tools\n\nYou may call one or more functions to assist with the user "
        "query.\n\nYou are provided with function signatures within <tools></tools> XML "
        "tags:\n<tools>\n";
    for (const Value& entry : *tools_) {
      const Value& tool = unwrap_function(entry);
      if (!member_truthy(tool, "defer_loading")) {
        append_content(tool_to_json(tool));
        out_ += "\n";
      }
    }
    out_ +=
        "</tools>\n\nFor each function call, output the function name and arguments within the "
        "following XML format:\n<tool_call>{function-name}<arg_key>{arg-key-1}</arg_key>"
        "<arg_value>{arg-value-1}</arg_value><arg_key>{arg-key-2}</arg_key><arg_value>"
        "{arg-value-2}</arg_value>...</tool_call>";
  }

  void render_assistant(const Value& m, bool after_last_user, std::size_t index) {
    out_ += "<|assistant|>";
    std::string content = visible_text(member(m, "content"));
    std::optional<std::string> reasoning;
    const Value* reasoning_field = member(m, "reasoning_content");
    if (reasoning_field && reasoning_field->is_string()) {
      reasoning = reasoning_field->get<std::string>();
    } else if (const auto close = content.find("</think>"); close != std::string::npos) {
      const std::string before = content.substr(0, close);
      const auto open = before.rfind("<think>");
      reasoning = open == std::string::npos ? before : before.substr(open + 7);
      content = content.substr(content.rfind("</think>") + 8);
    }
    if ((!clear_thinking_ || after_last_user) && reasoning) {
      out_ += "<think>";
      append_content(*reasoning);
      out_ += "</think>";
    } else {
      out_ += "<think></think>";
    }
    append_content(python::strip(content));
    const Value* calls = member(m, "tool_calls");
    if (!calls || !truthy(*calls)) return;
    if (!calls->is_array()) fail("chat request: messages[{}].tool_calls must be an array", index);
    for (std::size_t c = 0; c < calls->size(); ++c) render_tool_call((*calls)[c], index, c);
  }

  void render_tool_call(const Value& call, std::size_t message, std::size_t index) {
    const Value& function = member_truthy(call, "function") ? call["function"] : call;
    const Value* name = member(function, "name");
    if (!name || !name->is_string())
      fail("chat request: messages[{}].tool_calls[{}] needs a string function name", message,
           index);
    out_ += "<tool_call>";
    append_content(name->get<std::string>());
    const Value* arguments = member(function, "arguments");
    Value parsed;
    if (arguments && arguments->is_string()) {
      // OpenAI clients send arguments as a JSON string; the template wants the object.
      const std::string& text = arguments->get_ref<const std::string&>();
      require_json_nesting_within(
          text, fmt::format("chat request: messages[{}].tool_calls[{}].function.arguments (a JSON "
                            "string)",
                            message, index));
      parsed = Value::parse(text, nullptr, false);
      arguments = &parsed;
    }
    if (!arguments || !arguments->is_object())
      fail(
          "chat request: messages[{}].tool_calls[{}].function.arguments must be an object "
          "(or a JSON string holding one)",
          message, index);
    for (const auto& [key, value] : arguments->items()) {
      out_ += "<arg_key>";
      append_content(key);
      out_ += "</arg_key><arg_value>";
      append_content(value.is_string() ? value.get<std::string>() : python::json_dumps(value));
      out_ += "</arg_value>";
    }
    out_ += "</tool_call>";
  }

  // The template's id_of macro: tool_call_id, else id, else "".
  static std::string id_of(const Value& obj) {
    if (member_truthy(obj, "tool_call_id")) return python::str(obj["tool_call_id"]);
    if (member_truthy(obj, "id")) return python::str(obj["id"]);
    return {};
  }

  static bool is_list_of_outputs(const Value& m) {
    const Value* content = member(m, "content");
    return content && truthy(*content) && first_item_member(content, "output") != nullptr;
  }

  void tool_response(const Value* content) {
    out_ += "<tool_response>";
    append_visible_text(content);
    out_ += "</tool_response>";
  }

  void tool_references_to_response(const Value& refs) {
    if (!tools_) fail("chat request: a tool_reference result needs 'tools'");
    out_ += "<tool_response><tools>\n";
    for (const Value& ref : refs) {
      for (const Value& entry : *tools_) {
        const Value& tool = unwrap_function(entry);
        const Value* a = member(tool, "name");
        const Value* b = member(ref, "name");
        if ((!a && !b) || (a && b && *a == *b)) {
          append_content(tool_to_json(tool));
          out_ += "\n";
        }
      }
    }
    out_ += "</tools></tool_response>";
  }

  void render_output_entry(const Value& entry) {
    const Value* output = member(entry, "output");
    if (output && output->is_array() && first_item_is_tool_reference(output)) {
      tool_references_to_response(*output);
    } else {
      tool_response(output);
    }
  }

  void render_tool_response(const Value& m) {
    const Value* content = member(m, "content");
    if (content && content->is_string()) {
      tool_response(content);
    } else if (content && !content->is_object() && first_item_is_tool_reference(content)) {
      tool_references_to_response(*content);
    } else if (is_list_of_outputs(m)) {
      for (const Value& entry : *content) render_output_entry(entry);
    } else {
      tool_response(content);
    }
  }

  // Ids of the tool results in messages [first, last], entry by entry.
  std::vector<std::string> result_ids(std::size_t first, std::size_t last) const {
    std::vector<std::string> ids;
    for (std::size_t k = first; k <= last; ++k) {
      const Value& m = (*messages_)[k];
      if (is_list_of_outputs(m)) {
        for (const Value& entry : m["content"]) ids.push_back(id_of(entry));
      } else {
        ids.push_back(id_of(m));
      }
    }
    return ids;
  }

  // Sorting is safe when every result and every call has a distinct id and
  // every result answers one of the calls.
  static bool can_sort(const Value* calls, const std::vector<std::string>& results) {
    if (!calls || !truthy(*calls) || !calls->is_array()) return false;
    std::vector<std::string> call_ids;
    for (const Value& call : *calls) call_ids.push_back(id_of(call));
    for (const std::string& id : results) {
      if (id.empty() || std::count(results.begin(), results.end(), id) > 1 ||
          std::find(call_ids.begin(), call_ids.end(), id) == call_ids.end())
        return false;
    }
    for (std::size_t i = 0; i < call_ids.size(); ++i) {
      if (call_ids[i].empty() ||
          std::find(call_ids.begin() + i + 1, call_ids.end(), call_ids[i]) != call_ids.end())
        return false;
    }
    return true;
  }

  void render_tool_block(std::size_t first) {
    out_ += "<|observation|>";
    std::size_t last = first;
    while (last + 1 < messages_->size() && role(last + 1) == "tool") ++last;
    const Value* calls = nullptr;
    if (first > 0 && role(first - 1) == "assistant" &&
        member_truthy((*messages_)[first - 1], "tool_calls"))
      calls = member((*messages_)[first - 1], "tool_calls");
    if (!can_sort(calls, result_ids(first, last))) {
      for (std::size_t k = first; k <= last; ++k) render_tool_response((*messages_)[k]);
      return;
    }
    for (const Value& call : *calls) {
      const std::string call_id = id_of(call);
      for (std::size_t k = first; k <= last; ++k) {
        const Value& m = (*messages_)[k];
        if (is_list_of_outputs(m)) {
          for (const Value& entry : m["content"])
            if (id_of(entry) == call_id) render_output_entry(entry);
        } else if (id_of(m) == call_id) {
          render_tool_response(m);
        }
      }
    }
  }

  const Value& request_;
  const Value* messages_ = nullptr;
  const Value* tools_ = nullptr;
  bool clear_thinking_ = false;
  std::string out_;
  std::vector<ByteRange> content_;  // the request's own text in out_
};

}  // namespace

RenderedChat render_glm5_chat_marked(const nlohmann::ordered_json& request) {
  return Glm5Renderer(request).render();
}

std::string render_glm5_chat(const nlohmann::ordered_json& request) {
  return render_glm5_chat_marked(request).text;
}

}  // namespace glmrt::text
