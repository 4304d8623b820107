// What `glmrt serve` answers as a llama-server user expects it: a named
// tool_choice calls that tool (even when max_tokens cuts its arguments, then
// with finish_reason "length"), a request without max_tokens runs until the
// end of the turn or a full context, and the server describes itself
// (/props, /slots, `timings`). One server on glm_tiny with a short context.
#include "server_process.h"

#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

namespace glmrt::server_answers {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using ::testing::HasSubstr;

const fs::path kTinyModel = fs::path(GLMRT_FIXTURES) / "glm_tiny";
constexpr int kMaxContext = 512;  // the two tools take ~400 tokens of prompt
constexpr int kProfileMaxNewTokens = 8;

const char* const kTwoTools = R"([
  {"type": "function", "function": {"name": "get_time", "parameters": {"type": "object",
    "properties": {"zone": {"type": "string"}}}}},
  {"type": "function", "function": {"name": "lookup_verdict", "parameters": {"type": "object",
    "properties": {"case_id": {"type": "integer"}}, "required": ["case_id"]}}}])";

class ServerAnswers : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    profile_ = new fs::path(fs::temp_directory_path() /
                            ("glmrt-serve-answers-" + std::to_string(::getpid()) + ".yaml"));
    std::ofstream(*profile_) << "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                                "memory: {max_context: "
                             << kMaxContext
                             << "}\n"
                                "generation: {temperature: 0, max_new_tokens: "
                             << kProfileMaxNewTokens << "}\n";
    server_ =
        new test::ServerProcess({"--profile", profile_->string(), "--model", kTinyModel.string()});
  }
  static void TearDownTestSuite() {
    EXPECT_EQ(server_->stop(), 0);
    delete server_;
    fs::remove(*profile_);
    delete profile_;
  }

  static httplib::Client client() {
    httplib::Client c("127.0.0.1", server_->port());
    c.set_read_timeout(60);
    return c;
  }
  static Json post(const std::string& path, const std::string& body) {
    const auto response = client().Post(path, body, "application/json");
    if (!response) return Json{{"transport_error", true}};
    Json parsed = Json::parse(response->body);
    parsed["http_status"] = response->status;
    return parsed;
  }
  static Json get(const std::string& path) {
    const auto response = client().Get(path);
    if (!response) return Json{{"transport_error", true}};
    Json parsed = Json::parse(response->body);
    if (parsed.is_object()) parsed["http_status"] = response->status;
    return parsed;
  }
  // The `data:` events of a streamed response, [DONE] left out.
  static std::vector<Json> events(const std::string& path, const std::string& body) {
    const auto response = client().Post(path, body, "application/json");
    std::vector<Json> out;
    if (!response) return out;
    size_t at = 0;
    while ((at = response->body.find("data: ", at)) != std::string::npos) {
      const size_t end = response->body.find("\n\n", at);
      const std::string data = response->body.substr(at + 6, end - at - 6);
      if (data != "[DONE]") out.push_back(Json::parse(data));
      at = end;
    }
    return out;
  }

  static fs::path* profile_;
  static test::ServerProcess* server_;
};

fs::path* ServerAnswers::profile_ = nullptr;
test::ServerProcess* ServerAnswers::server_ = nullptr;

std::string named_choice_body(int max_tokens, bool stream) {
  return std::string(R"({"messages": [{"role": "user", "content": "Verdict of case 7?"}],)") +
         R"("tools": )" + kTwoTools +
         R"(, "tool_choice": {"type": "function", "function": {"name": "lookup_verdict"}},)" +
         R"("max_tokens": )" + std::to_string(max_tokens) + (stream ? R"(, "stream": true})" : "}");
}

TEST_F(ServerAnswers, ANamedToolChoiceCallsThatToolAndACutCallSaysLength) {
  // glm_tiny writes no well-formed call: the answer is cut by max_tokens.
  const Json answer = post("/v1/chat/completions", named_choice_body(3, false));
  ASSERT_EQ(answer["http_status"], 200) << answer;
  const Json& choice = answer["choices"][0];
  EXPECT_EQ(choice["finish_reason"], "length") << answer;
  ASSERT_EQ(choice["message"]["tool_calls"].size(), 1u) << answer;
  const Json& call = choice["message"]["tool_calls"][0];
  EXPECT_EQ(call["function"]["name"], "lookup_verdict") << answer;  // not the first tool
  EXPECT_TRUE(call["function"]["arguments"].is_string());
  EXPECT_EQ(answer["usage"]["completion_tokens"], 3);

  // Streamed: the same call, the same finish reason.
  const std::vector<Json> chunks = events("/v1/chat/completions", named_choice_body(3, true));
  ASSERT_FALSE(chunks.empty());
  std::string name, reason;
  for (const Json& chunk : chunks) {
    if (chunk["choices"].empty()) continue;
    const Json& c = chunk["choices"][0];
    if (c["delta"].contains("tool_calls")) name = c["delta"]["tool_calls"][0]["function"]["name"];
    if (!c["finish_reason"].is_null()) reason = c["finish_reason"];
  }
  EXPECT_EQ(name, "lookup_verdict");
  EXPECT_EQ(reason, "length");
}

TEST_F(ServerAnswers, WithoutMaxTokensAnAnswerRunsUntilTheContextIsFull) {
  // ignore_eos: only the context can end it (not the profile's max_new_tokens, 8).
  const Json chat = post("/v1/chat/completions",
                         R"({"messages": [{"role": "user", "content": "Tell a story"}],
                             "ignore_eos": true})");
  ASSERT_EQ(chat["http_status"], 200) << chat;
  EXPECT_EQ(chat["choices"][0]["finish_reason"], "length");
  EXPECT_GT(chat["usage"]["completion_tokens"], kProfileMaxNewTokens);
  // The cache holds max_context tokens; the answer's last token needs no row.
  EXPECT_EQ(chat["usage"]["total_tokens"], kMaxContext + 1) << chat["usage"];

  const Json text =
      post("/v1/completions", R"({"prompt": "Once upon a time", "ignore_eos": true})");
  ASSERT_EQ(text["http_status"], 200) << text;
  EXPECT_EQ(text["choices"][0]["finish_reason"], "length");
  EXPECT_GT(text["usage"]["completion_tokens"], 16);  // not OpenAI's legacy default
  EXPECT_EQ(text["usage"]["total_tokens"], kMaxContext + 1) << text["usage"];
}

void expect_timings(const Json& timings, int64_t predicted) {
  ASSERT_TRUE(timings.is_object()) << timings;
  for (const char* key : {"prompt_n", "prompt_ms", "prompt_per_second", "predicted_n",
                          "predicted_ms", "predicted_per_second"})
    EXPECT_TRUE(timings.contains(key) && timings[key].is_number()) << key << " in " << timings;
  EXPECT_EQ(timings["predicted_n"], predicted);
  EXPECT_GT(timings["predicted_ms"].get<double>(), 0);
  EXPECT_GT(timings["predicted_per_second"].get<double>(), 0);
}

TEST_F(ServerAnswers, ResponsesCarryTimingsStreamedOrNot) {
  const std::string ask = R"({"messages": [{"role": "user", "content": "Hi there"}],)"
                          R"( "max_tokens": 4, "ignore_eos": true)";
  const Json chat = post("/v1/chat/completions", ask + "}");
  ASSERT_EQ(chat["http_status"], 200) << chat;
  expect_timings(chat["timings"], 4);
  EXPECT_GT(chat["timings"]["prompt_n"], 0);
  const std::vector<Json> chunks = events("/v1/chat/completions", ask + R"(, "stream": true})");
  ASSERT_FALSE(chunks.empty());
  const Json& last = chunks.back();
  ASSERT_EQ(last["choices"][0]["finish_reason"], "length") << last;
  expect_timings(last["timings"], 4);
  const Json text = post("/v1/completions", R"({"prompt": "Hi", "max_tokens": 2})");
  ASSERT_EQ(text["http_status"], 200) << text;
  EXPECT_LE(text["timings"]["predicted_n"].get<int64_t>(), 2);
  EXPECT_TRUE(text["timings"].contains("prompt_per_second"));
}

TEST_F(ServerAnswers, PropsAndSlotsDescribeTheServerAsLlamaServerDoes) {
  const Json props = get("/props");
  ASSERT_EQ(props["http_status"], 200) << props;
  EXPECT_EQ(props["default_generation_settings"]["n_ctx"], kMaxContext);
  EXPECT_EQ(props["default_generation_settings"]["params"]["n_predict"], -1);  // no --max-tokens
  EXPECT_EQ(props["default_generation_settings"]["params"]["temperature"], 0.0);
  EXPECT_GE(props["total_slots"].get<int64_t>(), 1);
  EXPECT_THAT(props["model_path"].get<std::string>(), HasSubstr("glm_tiny"));
  EXPECT_EQ(props["model_alias"], "glm_tiny");
  EXPECT_TRUE(props["chat_template"].is_string());
  EXPECT_FALSE(props["build_info"].get<std::string>().empty());

  const Json slots = get("/slots");
  ASSERT_TRUE(slots.is_array()) << slots;
  ASSERT_EQ(slots.size(), props["total_slots"].get<size_t>());
  for (size_t i = 0; i < slots.size(); ++i) {
    EXPECT_EQ(slots[i]["id"], i);
    EXPECT_EQ(slots[i]["n_ctx"], kMaxContext);
    EXPECT_EQ(slots[i]["is_processing"], false);  // no request is running
    EXPECT_TRUE(slots[i]["n_cached_tokens"].is_number());
  }
}

}  // namespace
}  // namespace glmrt::server_answers
