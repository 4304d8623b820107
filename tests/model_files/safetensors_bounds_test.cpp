// A header's cost grows linearly with its tensors, and a header declaring
// more tensors than any checkpoint holds is refused: 80k dummy entries used to
// take minutes in the parser (issue 34).
#include <gtest/gtest.h>

#include <time.h>

#include <string>

#include "safetensors_header.h"
#include "test_files.h"

namespace glmrt {
namespace {

using model_files::kMaxSafetensorsTensors;
using model_files::parse_safetensors_header;

// `count` one-element F32 tensors back to back.
std::string dummy_header(std::size_t count) {
  std::string text = "{";
  for (std::size_t i = 0; i < count; ++i) {
    if (i > 0) text += ',';
    text += "\"t" + std::to_string(i) + R"(":{"dtype":"F32","shape":[1],"data_offsets":[)" +
            std::to_string(4 * i) + ',' + std::to_string(4 * i + 4) + "]}";
  }
  return text + "}";
}

// CPU seconds of this thread: what the parse costs, whatever else the
// machine runs (a loaded CI machine stretches wall time many times over).
double cpu_seconds() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + 1e-9 * static_cast<double>(now.tv_nsec);
}

// Quadratic parsing took 2.7 s for 20k entries, ~17 s for 50k and minutes
// for 80k; linear parsing takes ~0.2 s of CPU for 50k in a release build, a
// few times that under ASan: the bound has a wide margin either way.
TEST(SafetensorsBounds, FiftyThousandTensorsParseInLinearTime) {
  constexpr std::size_t kCount = 50'000;
  const std::string text = dummy_header(kCount);
  const double start = cpu_seconds();
  const auto tensors =
      parse_safetensors_header(text, 8 + text.size() + 4 * kCount, "many.safetensors", 0);
  EXPECT_LT(cpu_seconds() - start, 2.0);
  ASSERT_EQ(tensors.size(), kCount);
}

// A header of 200k tensors, more than a whole GLM-5 or DeepSeek-V3 in one
// file holds, is within the cap.
TEST(SafetensorsBounds, TheCapIsFarAboveRealCheckpoints) {
  EXPECT_GE(kMaxSafetensorsTensors, 200'000u);
}

// Past the cap the parse stops at the first surplus name, naming the file
// and the count, whatever the entries hold (a cap of 1000 here: the real
// one's million entries would take seconds to build under ASan).
TEST(SafetensorsBounds, MoreTensorsThanTheCapAreRefused) {
  std::string text = "{";
  for (int i = 0; i <= 1000; ++i) text += "\"" + std::to_string(i) + "\":0,";
  text.back() = '}';
  test::expect_error(
      [&] { parse_safetensors_header(text, 8 + text.size(), "stuffed.safetensors", 0, 1000); },
      {"stuffed.safetensors", "more than 1000 tensors"});
  const std::string within = dummy_header(1000);
  EXPECT_NO_THROW(
      parse_safetensors_header(within, 8 + within.size() + 4000, "ok.safetensors", 0, 1000));
}

}  // namespace
}  // namespace glmrt
