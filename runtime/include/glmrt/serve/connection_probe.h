// Whether the client of a request is still connected, asked while its
// answer is being computed: a client that disconnects mid-generation must
// stop the generation, not keep the model busy for nobody. cpp-httplib does
// not hand handlers their socket, so the probe finds it among the process's
// descriptors by the connection's two endpoints (unique while the request is
// being served), then polls it for the peer's hang-up without reading.
#pragma once

#include <string>

namespace glmrt::serve {

/// The address (text) and port of socket `fd`'s peer, or of its own end,
/// written as the probe compares them; false for a socket that is not TCP.
bool socket_endpoint(int fd, bool peer, std::string& address, int& port);

class ConnectionProbe {
 public:
  /// The TCP connection from remote_addr:remote_port to local port `local_port`.
  ConnectionProbe(const std::string& remote_addr, int remote_port, int local_port);

  /// True once the peer closed (or half-closed) or reset the connection. A
  /// probe that could not find its socket never says closed (writes still
  /// fail on a dead stream).
  bool peer_closed() const;
  bool found() const { return fd_ >= 0; }

 private:
  int fd_ = -1;
};

}  // namespace glmrt::serve
