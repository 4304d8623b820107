// `glmrt serve --parallel N`: requests generate together, one batched forward
// per step, and each answer is the one it gets alone. Two servers on
// glm_tiny: --parallel 1 answers each request alone (the reference), and
// --parallel 4 answers several at once; mixed prompt lengths, greedy and
// seeded sampling, a client leaving mid-batch and one answer running into the
// context limit. /slots shows the requests running at the same time.
#include "server_process.h"
#include "sse_content.h"

#include <unistd.h>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

namespace glmrt::server_parallel {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

const fs::path kTinyModel = fs::path(GLMRT_FIXTURES) / "glm_tiny";
constexpr int kMaxContext = 512;

class ServerParallel : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    profile_ = new fs::path(fs::temp_directory_path() /
                            ("glmrt-serve-parallel-" + std::to_string(::getpid()) + ".yaml"));
    std::ofstream(*profile_) << "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                                "memory: {max_context: "
                             << kMaxContext << "}\ngeneration: {temperature: 0}\n";
    alone_ = new test::ServerProcess(
        {"--profile", profile_->string(), "--model", kTinyModel.string(), "--parallel", "1"});
    together_ = new test::ServerProcess(
        {"--profile", profile_->string(), "--model", kTinyModel.string(), "--parallel", "4"});
  }
  static void TearDownTestSuite() {
    EXPECT_EQ(alone_->stop(), 0);
    EXPECT_EQ(together_->stop(), 0);
    delete alone_;
    delete together_;
    fs::remove(*profile_);
    delete profile_;
  }

  static httplib::Client client(const test::ServerProcess& server) {
    httplib::Client c("127.0.0.1", server.port());
    c.set_read_timeout(60);
    return c;
  }
  static Json post(const test::ServerProcess& server, const std::string& path,
                   const std::string& body) {
    const auto response = client(server).Post(path, body, "application/json");
    if (!response) return Json{{"transport_error", true}};
    Json parsed = Json::parse(response->body, nullptr, false);
    if (!parsed.is_object()) parsed = Json{{"body", response->body}};
    parsed["http_status"] = response->status;
    return parsed;
  }
  static Json get(const test::ServerProcess& server, const std::string& path) {
    const auto response = client(server).Get(path);
    return response ? Json::parse(response->body, nullptr, false) : Json();
  }

  // Each body answered alone by the --parallel 1 server, one after another.
  static std::vector<Json> one_by_one(const std::vector<std::string>& bodies) {
    std::vector<Json> out;
    for (const std::string& body : bodies) out.push_back(post(*alone_, "/v1/completions", body));
    return out;
  }
  // All bodies sent at once to the --parallel 4 server.
  static std::vector<Json> at_once(const std::vector<std::string>& bodies) {
    std::vector<Json> out(bodies.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < bodies.size(); ++i)
      threads.emplace_back([&, i] { out[i] = post(*together_, "/v1/completions", bodies[i]); });
    for (std::thread& t : threads) t.join();
    return out;
  }

  static void expect_same_answers(const std::vector<Json>& alone,
                                  const std::vector<Json>& together) {
    ASSERT_EQ(alone.size(), together.size());
    for (size_t i = 0; i < alone.size(); ++i) {
      ASSERT_EQ(alone[i]["http_status"], 200) << alone[i];
      ASSERT_EQ(together[i]["http_status"], 200) << together[i];
      EXPECT_EQ(together[i]["choices"][0]["text"], alone[i]["choices"][0]["text"])
          << "request " << i;
      EXPECT_EQ(together[i]["choices"][0]["finish_reason"], alone[i]["choices"][0]["finish_reason"])
          << "request " << i;
      EXPECT_EQ(together[i]["usage"]["completion_tokens"], alone[i]["usage"]["completion_tokens"]);
    }
  }

  static double generated_total(const test::ServerProcess& server) {
    const auto response = client(server).Get("/metrics");
    if (!response) return -1;
    const std::string name = "\nglmrt_generated_tokens_total ";
    const size_t at = response->body.find(name);
    return at == std::string::npos ? -1 : std::stod(response->body.substr(at + name.size()));
  }
  // The content of a chat answer, streamed (its deltas joined) or not.
  static std::string chat_content(const test::ServerProcess& server, const Json& request) {
    const auto response =
        client(server).Post("/v1/chat/completions", request.dump(), "application/json");
    if (!response || response->status != 200) return "<failed>";
    if (!request.value("stream", false))
      return Json::parse(response->body)["choices"][0]["message"]["content"];
    return test::streamed_chat_content(response->body);
  }

  static fs::path* profile_;
  static test::ServerProcess* alone_;
  static test::ServerProcess* together_;
};

fs::path* ServerParallel::profile_ = nullptr;
test::ServerProcess* ServerParallel::alone_ = nullptr;
test::ServerProcess* ServerParallel::together_ = nullptr;

std::string long_prompt(int words) {
  std::string text;
  for (int i = 0; i < words; ++i) text += "word" + std::to_string(i % 37) + " ";
  return text;
}

std::string body(const std::string& prompt, int max_tokens, Json extra = Json::object()) {
  extra.update({{"prompt", prompt}, {"max_tokens", max_tokens}, {"ignore_eos", true}});
  return extra.dump();
}

// Prompts of mixed lengths: a word, a sentence, about 60 and 200 tokens.
std::vector<std::string> mixed_bodies() {
  return {body("Rain", 12), body("Once upon a time there was a", 20), body(long_prompt(30), 9),
          body(long_prompt(100), 16)};
}

TEST_F(ServerParallel, TheStartupLineSaysHowManyRunAndWhatThePlanCounts) {
  EXPECT_TRUE(together_->wait_for_log(
      "glmrt serve: 4 requests generate at once (--parallel); the memory plan counts 4 KV "
      "caches of 512 tokens"))
      << together_->log();
  EXPECT_TRUE(
      alone_->wait_for_log("1 request generates at once (--parallel); the memory plan "
                           "counts 1 KV cache of 512 tokens"))
      << alone_->log();
}

TEST_F(ServerParallel, GreedyAnswersGivenTogetherAreTheOnesGivenAlone) {
  const auto bodies = mixed_bodies();
  expect_same_answers(one_by_one(bodies), at_once(bodies));
}

TEST_F(ServerParallel, SeededSampledAnswersGivenTogetherAreTheOnesGivenAlone) {
  std::vector<std::string> bodies;
  for (int i = 0; i < 4; ++i)
    bodies.push_back(body(i % 2 ? long_prompt(20 + 15 * i) : "Tell me", 14,
                          {{"temperature", 0.9}, {"top_p", 0.95}, {"seed", 100 + i}}));
  const auto alone = one_by_one(bodies);
  expect_same_answers(alone, at_once(bodies));
  // The seeds differ: so do the answers (sampling really ran).
  EXPECT_NE(alone[0]["choices"][0]["text"], alone[2]["choices"][0]["text"]);
}

TEST_F(ServerParallel, ChatStreamsAndJsonSchemaAnswersTogetherAreTheOnesAlone) {
  const Json schema = {
      {"type", "object"},
      {"properties",
       {{"name", {{"type", "string"}, {"maxLength", 8}}}, {"n", {{"type", "integer"}}}}},
      {"required", {"name", "n"}}};
  std::vector<Json> requests;
  for (int i = 0; i < 4; ++i) {
    Json r = {{"messages", {{{"role", "user"}, {"content", "Question " + std::to_string(i)}}}},
              {"max_tokens", 24},
              {"ignore_eos", true},
              {"stream", i % 2 == 0}};
    if (i >= 2)
      r["response_format"] = {{"type", "json_schema"},
                              {"json_schema", {{"name", "record"}, {"schema", schema}}}};
    if (i == 3) r["seed"] = 5, r["temperature"] = 0.8;
    requests.push_back(r);
  }
  std::vector<std::string> alone, together(requests.size());
  for (const Json& r : requests) alone.push_back(chat_content(*alone_, r));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < requests.size(); ++i)
    threads.emplace_back([&, i] { together[i] = chat_content(*together_, requests[i]); });
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < requests.size(); ++i) {
    EXPECT_NE(alone[i], "<failed>") << "request " << i;
    EXPECT_EQ(together[i], alone[i]) << "request " << i;
  }
  // The constrained answers are the schema's object (cut by max_tokens here).
  for (size_t i = 2; i < requests.size(); ++i)
    EXPECT_EQ(together[i].rfind("{", 0), 0u) << together[i];
}

TEST_F(ServerParallel, AClientLeavingMidBatchLeavesTheOthersUnchanged) {
  const auto bodies = mixed_bodies();
  const auto alone = one_by_one(bodies);
  std::vector<Json> together(bodies.size());
  std::vector<std::thread> threads;
  std::atomic<int> leaver_events = 0;
  // A streamed answer to the context limit; its client leaves after 3 events.
  threads.emplace_back([&] {
    httplib::Client c = client(*together_);
    httplib::Request request;
    request.method = "POST";
    request.path = "/v1/completions";
    request.body = Json{{"prompt", "Leave early"}, {"stream", true}, {"ignore_eos", true}}.dump();
    request.set_header("Content-Type", "application/json");
    request.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) {
      return ++leaver_events < 3;  // false: the client closes the connection
    };
    httplib::Response response;
    httplib::Error error = httplib::Error::Success;
    c.send(request, response, error);
  });
  const double generated_before = generated_total(*together_);
  for (size_t i = 0; i < bodies.size(); ++i)
    threads.emplace_back([&, i] { together[i] = post(*together_, "/v1/completions", bodies[i]); });
  for (std::thread& t : threads) t.join();
  EXPECT_GE(leaver_events.load(), 3);
  // The leaver's stream stopped long before the context limit (~500 tokens);
  // the others generate 57.
  double generated = generated_total(*together_) - generated_before;
  for (int tries = 0; tries < 100 && generated < 57; ++tries) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    generated = generated_total(*together_) - generated_before;
  }
  EXPECT_LT(generated, 300) << "the abandoned stream ran on";
  expect_same_answers(alone, together);
  // The server goes on answering.
  expect_same_answers({alone[0]}, {post(*together_, "/v1/completions", bodies[0])});
}

TEST_F(ServerParallel, OneAnswerReachingTheContextLimitEndsWhileTheOthersGoOn) {
  const auto bodies = mixed_bodies();
  const auto alone = one_by_one(bodies);
  std::vector<Json> together(bodies.size());
  Json full;
  std::vector<std::thread> threads;
  // No max_tokens: it runs until the context is full.
  threads.emplace_back([&] {
    full = post(*together_, "/v1/completions",
                Json{{"prompt", long_prompt(150)}, {"ignore_eos", true}}.dump());
  });
  for (size_t i = 0; i < bodies.size(); ++i)
    threads.emplace_back([&, i] { together[i] = post(*together_, "/v1/completions", bodies[i]); });
  for (std::thread& t : threads) t.join();
  expect_same_answers(alone, together);
  ASSERT_EQ(full["http_status"], 200) << full;
  EXPECT_EQ(full["choices"][0]["finish_reason"], "length");
  // The cache holds max_context tokens; the answer's last token needs no row.
  EXPECT_EQ(full["usage"]["total_tokens"], kMaxContext + 1) << full["usage"];
}

TEST_F(ServerParallel, RequestsRunAtTheSameTimeAsSlotsShow) {
  std::atomic<int> finished = 0;
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i)
    threads.emplace_back([&, i] {
      post(*together_, "/v1/completions",
           Json{{"prompt", "Story " + std::to_string(i)}, {"max_tokens", 200}, {"ignore_eos", true}}
               .dump());
      ++finished;
    });
  size_t most_processing = 0;
  while (finished.load() == 0) {
    const Json slots = get(*together_, "/slots");
    size_t processing = 0;
    for (const Json& slot : slots)
      if (slot.value("is_processing", false)) ++processing;
    most_processing = std::max(most_processing, processing);
    if (most_processing >= 2) break;
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(most_processing, 2u);
  // Each request holds a slot only while it runs.
  for (const Json& slot : get(*together_, "/slots")) EXPECT_EQ(slot["is_processing"], false);
}

TEST_F(ServerParallel, AParallelCountOutOfRangeOrAboveTheSlotsIsRefused) {
  test::ServerProcess* none = nullptr;
  try {
    none = new test::ServerProcess({"--profile", profile_->string(), "--model", kTinyModel.string(),
                                    "--parallel", "3", "--slots", "2"});
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("--slots 2 is below --parallel 3"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(none, nullptr);
  delete none;
  for (const char* count : {"65", "-1"}) {
    std::string message;
    try {
      test::ServerProcess refused(
          {"--profile", profile_->string(), "--model", kTinyModel.string(), "--parallel", count});
    } catch (const std::exception& e) {
      message = e.what();
    }
    EXPECT_NE(message.find("--parallel must be in 0..64 (0 = what the memory plan allows), got " +
                           std::string(count)),
              std::string::npos)
        << message;
  }
}

TEST_F(ServerParallel, ParallelTheBudgetCannotHoldIsRefusedWithThePlan) {
  // 64 caches of 65536 tokens (about 50 MiB each on glm_tiny) do not fit 1 GiB.
  const fs::path tight = fs::path(profile_->string() + ".tight.yaml");
  std::ofstream(tight) << "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                          "memory: {max_context: 65536, prefill_chunk: 64, budget: 1GiB}\n";
  std::string message;
  try {
    test::ServerProcess refused(
        {"--profile", tight.string(), "--model", kTinyModel.string(), "--parallel", "64"});
  } catch (const std::exception& e) {
    message = e.what();
  }
  fs::remove(tight);
  EXPECT_NE(message.find("is below the minimum"), std::string::npos) << message;
  EXPECT_NE(message.find("x 64 sequences decoded at once (serve --parallel)"), std::string::npos)
      << message;
  EXPECT_NE(message.find("Nothing was loaded"), std::string::npos) << message;
}

}  // namespace
}  // namespace glmrt::server_parallel
