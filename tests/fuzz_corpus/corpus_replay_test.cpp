// Every file of fuzz/corpus/<target>/ through its fuzz target: a clean
// refusal (glmrt::Error) is fine; a crash, a sanitizer report, another
// exception or a broken invariant (fuzz::InvariantBroken) fails the test.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz_targets.h"

namespace glmrt::fuzz {
namespace {

std::vector<std::filesystem::path> corpus_files(std::string_view target) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(GLMRT_FUZZ_CORPUS) / target))
    if (entry.is_regular_file()) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::uint8_t> read_bytes(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class CorpusReplay : public ::testing::TestWithParam<Target> {};

TEST_P(CorpusReplay, EveryInputIsHandled) {
  const Target& target = GetParam();
  const ScratchDir scratch(std::string(target.name) + "-replay");
  const auto files = corpus_files(target.name);
  ASSERT_FALSE(files.empty()) << "fuzz/corpus/" << target.name << " holds no seeds";
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    const std::vector<std::uint8_t> bytes = read_bytes(file);
    int result = 0;
    try {
      result = target.run(Input(bytes), scratch);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "uncaught " << typeid(e).name() << ": " << e.what();
    }
    // -1 marks an input the target declines (a known defect's exclusion):
    // such inputs belong out of the corpus.
    EXPECT_EQ(result, 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Fuzz, CorpusReplay, ::testing::ValuesIn(kTargets),
                         [](const ::testing::TestParamInfo<Target>& info) {
                           return std::string(info.param.name);
                         });

}  // namespace
}  // namespace glmrt::fuzz
