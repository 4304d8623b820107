// StreamOutbox: work posted on one thread runs on the other in order; posted
// work that throws marks the outbox failed, drops what follows and is
// rethrown once the stream is closed.
#include <glmrt/serve/stream_outbox.h>

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <thread>

namespace glmrt::serve {
namespace {

TEST(StreamOutbox, RunsWhatThePosterSendsInOrderUntilClosed) {
  StreamOutbox outbox;
  std::string seen;
  std::thread model([&] {
    for (char c : std::string("tokens")) outbox.post([&seen, c] { seen += c; });
    outbox.close();
  });
  outbox.run_until_closed();
  model.join();
  EXPECT_EQ(seen, "tokens");
  EXPECT_FALSE(outbox.failed());
}

TEST(StreamOutbox, WorkThatThrowsFailsTheStreamDropsTheRestAndIsRethrownWhenClosed) {
  StreamOutbox outbox;
  std::string seen;
  outbox.post([&] { seen += 'a'; });
  outbox.post([] { throw std::runtime_error("client stream broke"); });
  outbox.post([&] { seen += 'c'; });
  std::thread model([&] {
    while (!outbox.failed()) std::this_thread::yield();
    outbox.post([&] { seen += 'd'; });  // after the failure: dropped
    outbox.close();
  });
  try {
    outbox.run_until_closed();
    ADD_FAILURE() << "nothing was rethrown";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "client stream broke");
  }
  model.join();
  EXPECT_EQ(seen, "a");
}

}  // namespace
}  // namespace glmrt::serve
