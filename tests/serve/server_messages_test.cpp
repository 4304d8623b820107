// What `glmrt serve` prints and answers about itself: the startup line names
// a URL a browser takes (IPv6 in brackets), the access log and error
// messages escape what a client sent (a request path could hold terminal
// escape sequences), and a failure inside the server answers 500 with a
// generic message and an id whose log line carries the detail (file system
// paths, internal exception text) instead of sending it to the client.
#include "server_process.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <string>

namespace glmrt {
namespace {

namespace fs = std::filesystem;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

const fs::path kTinyModel = fs::path(GLMRT_FIXTURES) / "glm_tiny";
const std::string kProfile = std::string(GLMRT_SOURCE_DIR) + "/configs/reference.yaml";

bool can_listen_on_ipv6_loopback() {
  const int fd = ::socket(AF_INET6, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in6 address{};
  address.sin6_family = AF_INET6;
  address.sin6_addr = in6addr_loopback;
  const bool bound = ::bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0;
  ::close(fd);
  return bound;
}

TEST(ServeMessages, AnIpv6AddressIsBracketedInTheStartupUrl) {
  if (!can_listen_on_ipv6_loopback()) GTEST_SKIP() << "no IPv6 loopback here";
  test::ServerProcess server(
      {"--profile", kProfile, "--model", kTinyModel.string(), "--host", "::1"});
  EXPECT_THAT(server.log(), HasSubstr(" on http://[::1]:" + std::to_string(server.port()) + "/ "));
  httplib::Client client("::1", server.port());
  const auto health = client.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(server.stop(), 0);
}

TEST(ServeMessages, TheAccessLogAndErrorsEscapeTheRequestPath) {
  test::ServerProcess server({"--profile", kProfile, "--model", kTinyModel.string()},
                             /*access_log=*/true);
  httplib::Client client("127.0.0.1", server.port());
  client.set_url_encode(false);
  // ESC ] 0 ; ... BEL: sets the title of the terminal that prints it raw.
  const auto response = client.Get("/%1B%5D0%3Bpwned%07x");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 404);
  const auto message = nlohmann::json::parse(response->body)["error"]["message"].get<std::string>();
  EXPECT_EQ(message, "no route GET /\\x1b]0;pwned\\x07x");
  ASSERT_TRUE(server.wait_for_log("GET /\\x1b]0;pwned\\x07x 404")) << server.log();
  EXPECT_THAT(server.log(), AllOf(Not(HasSubstr("\x1b")), Not(HasSubstr("\x07"))));
  EXPECT_EQ(server.stop(), 0);
}

// The fault-io test plugin fails the first expert read with an EIO naming
// the model's file: an error from deep inside a request.
TEST(ServeMessages, AnInternalErrorAnswersAnIdAndLogsTheDetail) {
  const fs::path dir =
      fs::temp_directory_path() / ("glmrt-serve-500-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const fs::path profile = dir / "fault.yaml";
  std::ofstream(profile) << "plugins:\n"
                            "  kernels: kernels-scalar\n"
                            "  io:\n"
                            "    name: " GLMRT_FAULT_IO_PLUGIN
                            "\n"
                            "    settings: {eio_at: 1}\n"
                            "threads: 2\n"
                            "memory: {expert_cache: 4, prefetch: 0, pinned: 0, max_context: 256}\n";
  test::ServerProcess server({"--profile", profile.string(), "--model", kTinyModel.string()});
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(60);
  const auto response = client.Post(
      "/v1/completions", R"({"prompt": [3, 141, 59], "max_tokens": 1})", "application/json");
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 500);
  const auto error = nlohmann::json::parse(response->body)["error"];
  EXPECT_EQ(error["type"], "server_error");
  EXPECT_EQ(error["code"], "internal_error");
  const std::string message = error["message"];
  EXPECT_THAT(response->body,
              AllOf(Not(HasSubstr(kTinyModel.string())), Not(HasSubstr("Input/output error")),
                    Not(HasSubstr("safetensors"))));
  const size_t at = message.find("error id err-");
  ASSERT_NE(at, std::string::npos) << message;
  const std::string id = message.substr(at + 9, 20);  // "err-" and 16 hex digits
  ASSERT_TRUE(server.wait_for_log("glmrt serve: error " + id + ": ")) << id << "\n" << server.log();
  const std::string log = server.log();
  const std::string line = log.substr(log.find("glmrt serve: error " + id));
  EXPECT_THAT(line.substr(0, line.find('\n')),
              AllOf(HasSubstr(kTinyModel.string()), HasSubstr("Input/output error")));
  EXPECT_EQ(server.stop(), 0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace glmrt

namespace glmrt {
namespace {

// `--slots` comes from the profile's memory.kv_slots unless the flag is
// given; /metrics reports the count the server keeps.
double kv_slots_of(const test::ServerProcess& server) {
  httplib::Client client("127.0.0.1", server.port());
  const auto metrics = client.Get("/metrics");
  if (!metrics) return -1;
  const std::string name = "\nglmrt_kv_slots ";
  const size_t at = metrics->body.find(name);
  return at == std::string::npos ? -1 : std::stod(metrics->body.substr(at + name.size()));
}

TEST(ServeMessages, TheSlotCountComesFromTheProfileUnlessTheFlagGivesIt) {
  const fs::path profile =
      fs::temp_directory_path() / ("glmrt-serve-slots-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(profile) << "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                            "memory: {max_context: 256, kv_slots: 2}\n";
  const std::vector<std::string> args = {"--profile", profile.string(), "--model",
                                         kTinyModel.string()};
  {
    test::ServerProcess server(args);
    EXPECT_EQ(kv_slots_of(server), 2);
    EXPECT_EQ(server.stop(), 0);
  }
  {
    std::vector<std::string> flagged = args;
    flagged.insert(flagged.end(), {"--slots", "3"});
    test::ServerProcess server(flagged);
    EXPECT_EQ(kv_slots_of(server), 3);
    EXPECT_EQ(server.stop(), 0);
  }
  {  // auto: one per 256 tokens of max_context (reference.yaml: 4096), at most 16
    test::ServerProcess server({"--profile", kProfile, "--model", kTinyModel.string()});
    EXPECT_EQ(kv_slots_of(server), 16);
    EXPECT_EQ(server.stop(), 0);
  }
  std::vector<std::string> too_many = args;
  too_many.insert(too_many.end(), {"--slots", "1000"});
  try {
    test::ServerProcess server(too_many);
    ADD_FAILURE() << "serve started with --slots 1000";
  } catch (const std::exception& e) {
    EXPECT_THAT(e.what(), HasSubstr("--slots must be in 1..256"));
  }
  fs::remove(profile);
}

/// The message ServerProcess throws when serve `args` does not start.
std::string start_failure(const std::vector<std::string>& args) {
  try {
    test::ServerProcess server(args);
  } catch (const std::exception& e) {
    return e.what();
  }
  ADD_FAILURE() << "serve started";
  return {};
}

TEST(ServeMessages, AnEmptyApiKeyIsRefused) {
  for (const std::string key : {"", "  "}) {
    EXPECT_THAT(
        start_failure({"--profile", kProfile, "--model", kTinyModel.string(), "--api-key", key}),
        AllOf(HasSubstr("exit status 1"), HasSubstr("--api-key is empty")));
  }
}

// cpp-httplib's default SO_REUSEPORT let a second server bind the port and
// take part of the connections.
TEST(ServeMessages, ASecondServerOnAPortInUseFailsNamingIt) {
  test::ServerProcess first({"--profile", kProfile, "--model", kTinyModel.string()});
  const std::string port = std::to_string(first.port());
  EXPECT_THAT(
      start_failure({"--profile", kProfile, "--model", kTinyModel.string(), "--port", port}),
      AllOf(HasSubstr("exit status 1"), HasSubstr("address in use"),
            HasSubstr("port " + port + " is taken")));
  httplib::Client client("127.0.0.1", first.port());
  const auto health = client.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  EXPECT_EQ(first.stop(), 0);
}

}  // namespace
}  // namespace glmrt
