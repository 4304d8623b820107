// The probe finds a connection's socket by its endpoints and tells an open
// connection (even one with unread data) from one the peer closed.
#include <glmrt/serve/connection_probe.h>

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

namespace glmrt::serve {
namespace {

struct Connection {
  int listener = -1, client = -1, server = -1;
  int server_port = 0, client_port = 0;

  Connection() {
    listener = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t size = sizeof address;
    if (bind(listener, reinterpret_cast<sockaddr*>(&address), size) != 0 ||
        listen(listener, 1) != 0)
      return;
    getsockname(listener, reinterpret_cast<sockaddr*>(&address), &size);
    server_port = ntohs(address.sin_port);
    client = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(client, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) return;
    server = accept(listener, nullptr, nullptr);
    sockaddr_in local{};
    size = sizeof local;
    getsockname(client, reinterpret_cast<sockaddr*>(&local), &size);
    client_port = ntohs(local.sin_port);
  }
  ~Connection() {
    for (int fd : {listener, client, server})
      if (fd >= 0) close(fd);
  }
};

TEST(ConnectionProbe, SeesThePeerClose) {
  Connection c;
  ASSERT_GE(c.server, 0);
  const ConnectionProbe probe("127.0.0.1", c.client_port, c.server_port);
  ASSERT_TRUE(probe.found());
  EXPECT_FALSE(probe.peer_closed());
  ASSERT_EQ(write(c.client, "x", 1), 1);  // a pipelined request: still connected
  EXPECT_FALSE(probe.peer_closed());
  close(c.client);  // gone, with its byte unread
  c.client = -1;
  EXPECT_TRUE(probe.peer_closed());
}

TEST(ConnectionProbe, AnUnknownConnectionIsNeverClosed) {
  const ConnectionProbe probe("127.0.0.1", 1, 2);
  EXPECT_FALSE(probe.found());
  EXPECT_FALSE(probe.peer_closed());
}

}  // namespace
}  // namespace glmrt::serve
