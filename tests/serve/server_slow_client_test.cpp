// `glmrt serve --parallel 2` with a client that opens a streamed answer and
// never reads it: the model thread only decides tokens (StreamOutbox), the
// events' JSON runs on the request's thread and the socket writes on the
// HTTP thread, so the other client's stream comes in its normal time
// instead of waiting for the stalled one (its write times out after 10 s).
#include "server_process.h"
#include "sse_content.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <httplib.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

namespace glmrt::server_slow_client {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// A connection that sends one request and then reads nothing, its receive
// buffer as small as the kernel allows: the server's writes fill it at once.
class SilentClient {
 public:
  SilentClient(int port, const std::string& path, const std::string& body)
      : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    const int small = 1;
    ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(static_cast<uint16_t>(port));
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&address), sizeof address) != 0)
      throw std::runtime_error("cannot connect to the server");
    const std::string request = "POST " + path +
                                " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
                                "application/json\r\nContent-Length: " +
                                std::to_string(body.size()) + "\r\n\r\n" + body;
    if (::send(fd_, request.data(), request.size(), 0) != static_cast<ssize_t>(request.size()))
      throw std::runtime_error("cannot send the request");
  }
  ~SilentClient() { ::close(fd_); }
  SilentClient(const SilentClient&) = delete;
  SilentClient& operator=(const SilentClient&) = delete;

 private:
  int fd_;
};

Json chat(const std::string& content, int max_tokens) {
  return {{"messages", {{{"role", "user"}, {"content", content}}}},
          {"max_tokens", max_tokens},
          {"ignore_eos", true},
          {"stream", true}};
}

// The streamed answer's content, joined from its deltas ("<failed>" when none came).
std::string streamed_content(httplib::Client& client, const Json& request) {
  const auto response = client.Post("/v1/chat/completions", request.dump(), "application/json");
  if (!response || response->status != 200) return "<failed>";
  return test::streamed_chat_content(response->body);
}

bool slots_processing(httplib::Client& client, int count) {
  const auto response = client.Get("/slots");
  if (!response) return false;
  int processing = 0;
  for (const Json& slot : Json::parse(response->body, nullptr, false))
    if (slot.value("is_processing", false)) ++processing;
  return processing == count;
}

TEST(ServerSlowClient, AClientThatStopsReadingDoesNotSlowTheOtherStream) {
  const fs::path profile =
      fs::temp_directory_path() / ("glmrt-slow-client-" + std::to_string(::getpid()) + ".yaml");
  std::ofstream(profile) << "plugins: {kernels: kernels-scalar, io: io-buffered}\n"
                            "memory: {max_context: 512}\ngeneration: {temperature: 0}\n";
  test::ServerProcess server({"--profile", profile.string(), "--model",
                              (fs::path(GLMRT_FIXTURES) / "glm_tiny").string(), "--parallel", "2"});
  httplib::Client client("127.0.0.1", server.port());
  client.set_read_timeout(60);
  const Json quick = chat("Quick question", 40);
  const std::string alone = streamed_content(client, quick);
  ASSERT_NE(alone, "<failed>");
  {
    // An answer to the context's end (~480 events, far more than the
    // socket buffers hold) that its client never reads.
    const SilentClient silent(server.port(), "/v1/chat/completions",
                              chat("Never read", 470).dump());
    for (int tries = 0; tries < 200 && !slots_processing(client, 1); ++tries)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    const auto start = std::chrono::steady_clock::now();
    const std::string together = streamed_content(client, quick);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_EQ(together, alone);
    // Alone it takes well under 0.1 s (under 1 s with sanitizers); waiting on
    // the stalled client would take its 10 s write timeout.
    EXPECT_LT(seconds, 3.0);
  }
  // The silent client gone, the server answers as before.
  EXPECT_EQ(streamed_content(client, quick), alone);
  EXPECT_EQ(server.stop(), 0) << server.log();
  fs::remove(profile);
}

}  // namespace
}  // namespace glmrt::server_slow_client
