// The engine's history: saved at the end of each generation, and a folder
// that cannot be written is one warning, never an error.
#include "engine_fixture.h"
#include "temp_folder.h"

#include <glmrt/generate/generator.h>
#include <glmrt/generate/session.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

namespace glmrt {
namespace {

using test::TempFolder;

Generation generate_a_few(Engine& engine) {
  Session session(engine);
  SamplingParams greedy;
  greedy.temperature = 0;
  Sampler sampler(greedy);
  const int32_t prompt[] = {3, 1, 4, 1, 5};
  return generate(session, sampler, prompt, {3, {}});
}

TEST(HistoryEngine, SavedAtTheEndOfEachGeneration) {
  TempFolder dir;
  Profile profile = test_support::reference_profile();
  profile.history_folder = dir.path();
  auto engine = test_support::open_tiny_engine(profile);
  ASSERT_NE(engine->history(), nullptr);
  generate_a_few(*engine);
  // Saved before the engine closes: another reader sees the counts now.
  const UsageHistory reader(dir.path(), engine->model_id(), engine->expert_rows(), 16);
  EXPECT_EQ(reader.loaded_status(), HistoryStatus::ok);
  // 5 prompt positions + 2 decoded (the third token is never decoded), top-4.
  EXPECT_EQ(reader.totals().layer_total(1), 7u * 4);
  EXPECT_TRUE(engine->history()->unsaved().empty());
}

TEST(HistoryEngine, UnwritableFolderWarnsOnce) {
  TempFolder dir;
  const auto not_a_folder = dir.path() / "file";
  std::ofstream(not_a_folder) << "x";
  Profile profile = test_support::reference_profile();
  profile.history_folder = not_a_folder;
  auto engine = test_support::open_tiny_engine(profile);
  ::testing::internal::CaptureStderr();
  generate_a_few(*engine);
  generate_a_few(*engine);
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_THAT(err, ::testing::HasSubstr("expert usage history not saved"));
  EXPECT_EQ(err.find("not saved"), err.rfind("not saved")) << err;
  EXPECT_FALSE(engine->history()->unsaved().empty());  // kept for the next try
}

}  // namespace
}  // namespace glmrt
