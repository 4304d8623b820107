// Which requests a server on loopback answers: Host names a page cannot
// rebind to, and state-changing requests only from the server's own page or
// the origin --cors allows.
#include <glmrt/serve/access_policy.h>

#include <gtest/gtest.h>

namespace glmrt::serve {
namespace {

TEST(AccessPolicy, HostMustBeLoopbackAnAddressOrAllowed) {
  for (const char* host : {"127.0.0.1:8080", "localhost", "LOCALHOST:1", "app.localhost:3",
                           "[::1]:8080", "127.3.4.5", "192.168.1.20:8080", "[fe80::1]", "::1"})
    EXPECT_FALSE(host_refusal(host, {})) << host;
  const auto refused = host_refusal("evil.example:8080", {});
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("--allowed-host evil.example"), std::string::npos);
  EXPECT_TRUE(host_refusal("localhost.evil.example", {}));
  EXPECT_TRUE(host_refusal("", {}));
  EXPECT_FALSE(host_refusal("box.lan:8080", {"box.lan"}));
  EXPECT_FALSE(host_refusal("Box.LAN", {"box.lan"}));
  EXPECT_FALSE(host_refusal("anything", {"*"}));
  EXPECT_TRUE(host_refusal("other.lan", {"box.lan"}));
}

TEST(AccessPolicy, OnlyTheOwnPageOrTheCorsOriginMayPost) {
  EXPECT_FALSE(origin_refusal("POST", "", "127.0.0.1:8080", ""));  // curl, SDKs: no Origin
  EXPECT_FALSE(origin_refusal("POST", "http://127.0.0.1:8080", "127.0.0.1:8080", ""));
  EXPECT_FALSE(origin_refusal("GET", "http://evil.example", "127.0.0.1:8080", ""));
  const auto refused = origin_refusal("POST", "http://evil.example", "127.0.0.1:8080", "");
  ASSERT_TRUE(refused);
  EXPECT_NE(refused->find("--cors http://evil.example"), std::string::npos);
  EXPECT_TRUE(origin_refusal("POST", "null", "127.0.0.1:8080", ""));
  EXPECT_TRUE(origin_refusal("POST", "http://127.0.0.1:9999", "127.0.0.1:8080", ""));
  EXPECT_FALSE(
      origin_refusal("POST", "http://app.example", "127.0.0.1:8080", "http://app.example"));
  EXPECT_TRUE(
      origin_refusal("POST", "http://evil.example", "127.0.0.1:8080", "http://app.example"));
  EXPECT_FALSE(origin_refusal("POST", "http://evil.example", "127.0.0.1:8080", "*"));
}

TEST(AccessPolicy, WarnsForOpenListeningAndCorsForAll) {
  EXPECT_TRUE(access_warnings("127.0.0.1", false, "").empty());
  EXPECT_TRUE(access_warnings("0.0.0.0", true, "http://app.example").empty());
  EXPECT_EQ(access_warnings("0.0.0.0", false, "").size(), 1u);
  EXPECT_EQ(access_warnings("::", false, "*").size(), 2u);
  EXPECT_EQ(access_warnings("localhost", false, "*").size(), 1u);
}

}  // namespace
}  // namespace glmrt::serve
