#include <glmrt/serve/connection_probe.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <charconv>
#include <filesystem>
#include <system_error>

namespace glmrt::serve {
namespace {

// Address text and port of a socket address, as httplib reports them.
bool describe(const sockaddr_storage& address, std::string& text, int& port) {
  char buffer[INET6_ADDRSTRLEN] = {};
  if (address.ss_family == AF_INET) {
    const auto& a = reinterpret_cast<const sockaddr_in&>(address);
    if (!inet_ntop(AF_INET, &a.sin_addr, buffer, sizeof buffer)) return false;
    port = ntohs(a.sin_port);
  } else if (address.ss_family == AF_INET6) {
    const auto& a = reinterpret_cast<const sockaddr_in6&>(address);
    if (!inet_ntop(AF_INET6, &a.sin6_addr, buffer, sizeof buffer)) return false;
    port = ntohs(a.sin6_port);
  } else {
    return false;
  }
  text = buffer;
  return true;
}

bool is_connection(int fd, const std::string& remote_addr, int remote_port, int local_port) {
  struct stat info {};
  if (fstat(fd, &info) != 0 || !S_ISSOCK(info.st_mode)) return false;
  sockaddr_storage local{}, peer{};
  socklen_t local_size = sizeof local, peer_size = sizeof peer;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_size) != 0 ||
      getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_size) != 0)
    return false;
  std::string local_text, peer_text;
  int local_found = -1, peer_found = -1;
  return describe(local, local_text, local_found) && describe(peer, peer_text, peer_found) &&
         local_found == local_port && peer_found == remote_port && peer_text == remote_addr;
}

}  // namespace

bool socket_endpoint(int fd, bool peer, std::string& address, int& port) {
  sockaddr_storage where{};
  socklen_t size = sizeof where;
  const int found = peer ? getpeername(fd, reinterpret_cast<sockaddr*>(&where), &size)
                         : getsockname(fd, reinterpret_cast<sockaddr*>(&where), &size);
  return found == 0 && describe(where, address, port);
}

ConnectionProbe::ConnectionProbe(const std::string& remote_addr, int remote_port, int local_port) {
  // Other threads open and close descriptors meanwhile; one that vanishes is
  // simply not ours, and a listing that fails leaves the probe without a socket.
  std::error_code ec;
  std::filesystem::directory_iterator entries("/proc/self/fd", ec);
  for (; !ec && entries != std::filesystem::directory_iterator(); entries.increment(ec)) {
    const std::string name = entries->path().filename().string();
    int fd = -1;
    const auto [end, parse_error] = std::from_chars(name.data(), name.data() + name.size(), fd);
    if (parse_error != std::errc() || end != name.data() + name.size()) continue;
    if (is_connection(fd, remote_addr, remote_port, local_port)) {
      fd_ = fd;
      return;
    }
  }
}

bool ConnectionProbe::peer_closed() const {
  if (fd_ < 0) return false;
  // POLLRDHUP reports the peer's FIN even behind unread bytes (a pipelined
  // request), which a peek would not reach.
  pollfd p{fd_, POLLRDHUP, 0};
  if (poll(&p, 1, 0) <= 0) return false;
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR)) != 0;
}

}  // namespace glmrt::serve
