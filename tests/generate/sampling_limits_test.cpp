// One range per sampling setting, held by the Sampler, the profile loader and
// generation_config.json alike; NaN (which passes every `<` and `>`) is out
// of every range. The command-line flags are checked in tests/cli.
#include <glmrt/base/error.h>
#include <glmrt/profile/profile.h>
#include <glmrt/sampling/sampler.h>
#include <glmrt/sampling/sampling_limits.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

#include "temp_folder.h"

namespace glmrt {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using S = SamplingSetting;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

TEST(SamplingLimits, NaNAndInfinitiesAreOutOfEveryRange) {
  for (const SamplingRange& range : sampling_ranges()) {
    for (double bad : {kNaN, kInf, -kInf}) {
      const auto error = sampling_value_error(range.setting, bad);
      ASSERT_TRUE(error) << range.key << " accepted " << bad;
      EXPECT_THAT(*error, HasSubstr("out of range")) << range.key;
    }
  }
}

TEST(SamplingLimits, BoundsAreOpenOrClosedAsDocumented) {
  EXPECT_FALSE(sampling_value_error(S::temperature, 0));
  EXPECT_TRUE(sampling_value_error(S::temperature, -0.1));
  EXPECT_TRUE(sampling_value_error(S::top_p, 0));
  EXPECT_FALSE(sampling_value_error(S::top_p, 1));
  EXPECT_FALSE(sampling_value_error(S::min_p, 0));
  EXPECT_TRUE(sampling_value_error(S::min_p, 1));
  EXPECT_TRUE(sampling_value_error(S::repetition_penalty, 0));
  EXPECT_FALSE(sampling_value_error(S::presence_penalty, -2));
  EXPECT_FALSE(sampling_value_error(S::frequency_penalty, -100));
  EXPECT_FALSE(sampling_value_error(S::frequency_penalty, 100));
  EXPECT_TRUE(sampling_value_error(S::frequency_penalty, 100.5));
  EXPECT_TRUE(sampling_value_error(S::top_k, 2.5));  // integers only
  EXPECT_FALSE(sampling_value_error(S::max_new_tokens, 0));
  EXPECT_EQ(*sampling_value_error(S::top_p, 1.5),
            "1.5 is out of range: expected a number in (0, 1]");
  EXPECT_EQ(sampling_range(S::min_p).flag, "--min-p");
}

// {:g} printed 1048576 as "1.04858e+06" and 1e9 as "1e+09".
TEST(SamplingLimits, IntegersInRangeMessagesArePrintedWhole) {
  EXPECT_EQ(*sampling_value_error(S::max_new_tokens, 1e9),
            "1000000000 is out of range: expected an integer from 0 to 1048576");
  EXPECT_EQ(*sampling_value_error(S::top_k, 2.5),
            "2.5 is out of range: expected an integer from 0 to 1073741824");
  EXPECT_EQ(sampling_range(S::presence_penalty).expected(), "a number in [-100, 100]");
}

TEST(SamplingLimits, TheSamplerRefusesNaNNamingTheKey) {
  for (const SamplingRange& range : sampling_ranges()) {
    if (range.integer) continue;
    SamplingParams p;
    if (range.setting == S::temperature) p.temperature = kNaN;
    if (range.setting == S::top_p) p.top_p = kNaN;
    if (range.setting == S::min_p) p.min_p = kNaN;
    if (range.setting == S::repetition_penalty) p.repetition_penalty = kNaN;
    if (range.setting == S::presence_penalty) p.presence_penalty = kNaN;
    if (range.setting == S::frequency_penalty) p.frequency_penalty = kNaN;
    try {
      Sampler sampler(p);
      ADD_FAILURE() << range.key << " = nan was accepted";
    } catch (const Error& e) {
      EXPECT_THAT(e.what(), AllOf(HasSubstr(std::string(range.key)), HasSubstr("nan")));
    }
  }
}

class SamplingFiles : public ::testing::Test {
 protected:
  std::filesystem::path dir() const {
    const auto d = test::process_temp_folder() /
                   ("glmrt_limits_" +
                    std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    std::filesystem::create_directories(d);
    return d;
  }
  std::string error_of(const std::function<void()>& action) {
    try {
      action();
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
};

TEST_F(SamplingFiles, AProfileValueOutOfRangeNamesFileLineAndKey) {
  const auto file = dir() / "p.yaml";
  auto error_with = [&](const char* generation) {
    std::ofstream(file) << "plugins: {kernels: kernels-scalar, io: io-buffered}\n" << generation;
    return error_of([&] { load_profile(file); });
  };
  EXPECT_THAT(error_with("generation:\n  temperature: 1\n  top_p: 0\n"),
              AllOf(HasSubstr(file.string() + ":4: key `generation.top_p`"),
                    HasSubstr("expected a number in (0, 1]")));
  EXPECT_THAT(error_with("generation: {min_p: .nan}\n"),
              AllOf(HasSubstr("key `generation.min_p`"), HasSubstr("finite number")));
  EXPECT_THAT(error_with("generation: {frequency_penalty: -101}\n"),
              AllOf(HasSubstr(file.string() + ":2: key `generation.frequency_penalty`"),
                    HasSubstr("-101 is out of range: expected a number in [-100, 100]")));
  EXPECT_THAT(error_with("generation: {frequency_penalty: .nan}\n"),
              AllOf(HasSubstr("key `generation.frequency_penalty`"), HasSubstr("finite number")));
}

TEST_F(SamplingFiles, AGenerationConfigValueOutOfRangeNamesTheFile) {
  std::ofstream(dir() / "generation_config.json") << R"({"do_sample": true, "top_p": 1.5})";
  EXPECT_THAT(error_of([&] { resolve_sampling(dir(), Profile{}); }),
              AllOf(HasSubstr("generation_config.json"), HasSubstr("`top_p`"),
                    HasSubstr("1.5 is out of range")));
  std::ofstream(dir() / "generation_config.json") << R"({"top_k": 2.5})";
  EXPECT_THAT(error_of([&] { resolve_sampling(dir(), Profile{}); }),
              AllOf(HasSubstr("generation_config.json"), HasSubstr("`top_k`")));
}

}  // namespace
}  // namespace glmrt
