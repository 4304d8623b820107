// The tensors of a checkpoint nothing reads are listed in one warning, whole
// layers summarised.
#include <gtest/gtest.h>

#include <glmrt/model_files/safetensors.h>
#include <glmrt/model_files/tensor_usage.h>
#include "test_files.h"

namespace glmrt {
namespace {

class TensorUsageTest : public testing::Test {
 protected:
  TensorUsageTest() {
    std::vector<test::TensorSpec> specs;
    for (const char* name :
         {"model.embed_tokens.weight", "lm_head.weight", "model.layers.0.a.weight",
          "model.layers.0.b.weight", "model.layers.1.a.weight", "model.layers.1.b.weight",
          "model.layers.1.c.weight", "model.layers.10.a.weight"})
      specs.push_back({name, "F32", {1}, test::bytes_of<float>({1.f})});
    test::write_file(tmp_.path() / "model.safetensors", test::safetensors_file(specs));
    tensors_ = std::make_unique<TensorDirectory>(TensorDirectory::open(tmp_.path()));
  }
  std::string warning_of(const TensorUsage& usage) {
    testing::internal::CaptureStderr();
    usage.warn_unused(tmp_.path());
    return testing::internal::GetCapturedStderr();
  }

  test::TempFolder tmp_;
  std::unique_ptr<TensorDirectory> tensors_;
};

TEST_F(TensorUsageTest, EverythingUsedMeansNoWarning) {
  TensorUsage usage(*tensors_);
  for (const TensorInfo& t : tensors_->tensors()) usage.mark(t);
  EXPECT_TRUE(usage.unused().empty());
  EXPECT_EQ(warning_of(usage), "");
}

TEST_F(TensorUsageTest, UnusedTensorsAreListedAndWholeLayersSummarised) {
  TensorUsage usage(*tensors_);
  usage.mark("model.embed_tokens.weight");
  usage.mark("model.layers.0.a.weight");
  usage.mark("model.layers.0.b.weight");
  usage.mark("model.layers.10.a.weight");
  usage.mark("no.such.tensor");  // ignored
  EXPECT_EQ(usage.unused(),
            (std::vector<std::string>{"lm_head.weight", "model.layers.1.a.weight",
                                      "model.layers.1.b.weight", "model.layers.1.c.weight"}));
  const std::string warning = warning_of(usage);
  EXPECT_NE(warning.find("glmrt: warning: 4 tensors"), std::string::npos) << warning;
  EXPECT_NE(warning.find("lm_head.weight, model.layers.1.* (3 tensors)"), std::string::npos)
      << warning;
}

TEST_F(TensorUsageTest, PartlyUsedLayersListTheirUnusedTensors) {
  TensorUsage usage(*tensors_);
  for (const TensorInfo& t : tensors_->tensors())
    if (t.name != "model.layers.1.b.weight") usage.mark(t);
  const std::string warning = warning_of(usage);
  EXPECT_NE(warning.find("1 tensor of the checkpoint"), std::string::npos) << warning;
  EXPECT_NE(warning.find("is not used by this config.json: model.layers.1.b.weight\n"),
            std::string::npos)
      << warning;
}

}  // namespace
}  // namespace glmrt
