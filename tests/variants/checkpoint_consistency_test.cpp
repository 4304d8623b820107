// A config.json and a checkpoint that disagree, or weights that are not
// finite: refused naming the key or tensor, or (where the run stays correct)
// run with a warning. Before, each of these ran and exited 0 with different
// output.
#include <glmrt/base/error.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <functional>
#include <limits>
#include <string>

#include "checkpoint_generator.h"
#include "variant_harness.h"

namespace glmrt::test {
namespace {

using nlohmann::json;

/// A model directory: the base variant's tensors (edited) under its config (edited).
class ModelDir {
 public:
  ModelDir(
      const std::function<void(json&)>& edit_config,
      const std::function<void(TensorList&)>& edit_tensors = [](TensorList&) {})
      : dir_("glmrt-consistency") {
    config_ = base_variant_config();
    tensors_ = make_checkpoint_tensors({config_, /*seed=*/11});
    // As the profiles' max_context, so only the test about it is warned.
    config_["max_position_embeddings"] = 4096;
    edit_config(config_);
    edit_tensors(tensors_);
    write_checkpoint(dir_.path(), config_, tensors_, 2);
  }
  const std::filesystem::path& path() const { return dir_.path(); }
  const json& config() const { return config_; }
  const TensorList& tensors() const { return tensors_; }

 private:
  ScratchDir dir_;
  json config_;
  TensorList tensors_;
};

std::string load_error(const ModelDir& dir) {
  try {
    open_reference_engine(dir.path());
  } catch (const Error& e) {
    return e.what();
  }
  return "loaded without an error";
}

/// Opens the model, returning what it printed on stderr.
std::string load_warnings(const ModelDir& dir, std::unique_ptr<Engine>* engine = nullptr) {
  testing::internal::CaptureStderr();
  std::unique_ptr<Engine> opened;
  try {
    opened = open_reference_engine(dir.path());
  } catch (...) {
    testing::internal::GetCapturedStderr();
    throw;
  }
  if (engine) *engine = std::move(opened);
  return testing::internal::GetCapturedStderr();
}

void no_change(json&) {}

TEST(ConfigAgainstCheckpoint, OneLayerMoreWouldRunTheMtpLayerAsADecoderLayer) {
  const ModelDir dir([](json& c) {
    c["num_hidden_layers"] = 6;
    c["mlp_layer_types"].push_back("sparse");
    c["indexer_types"].push_back("full");
  });
  const std::string message = load_error(dir);
  EXPECT_NE(message.find("'num_hidden_layers' is 6"), std::string::npos) << message;
  EXPECT_NE(message.find("has 5 decoder layers"), std::string::npos) << message;
  EXPECT_NE(message.find("model.layers.5 is the multi-token-prediction layer"), std::string::npos)
      << message;
}

TEST(ConfigAgainstCheckpoint, OneLayerFewerWouldLeaveALayerUnused) {
  const ModelDir dir([](json& c) {
    c["num_hidden_layers"] = 4;
    c["mlp_layer_types"].erase(4);
    c["indexer_types"].erase(4);
  });
  const std::string message = load_error(dir);
  EXPECT_NE(message.find("'num_hidden_layers' is 4"), std::string::npos) << message;
  EXPECT_NE(message.find("model.layers.4 would go unused"), std::string::npos) << message;
}

TEST(ConfigAgainstCheckpoint, AnAbsurdLayerCountFailsAtOnce) {
  const ModelDir dir([](json& c) {
    c["num_hidden_layers"] = 1000000000;
    c.erase("mlp_layer_types");
    c.erase("indexer_types");
  });
  const auto start = std::chrono::steady_clock::now();
  const std::string message = load_error(dir);
  EXPECT_NE(message.find("'num_hidden_layers' is 1000000000"), std::string::npos) << message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
}

TEST(ConfigAgainstCheckpoint, MtpLayerDroppedByAConversionRunsWithANote) {
  const ModelDir dir(no_change, [](TensorList& tensors) {
    std::erase_if(tensors,
                  [](const HostTensor& t) { return t.name.starts_with("model.layers.5."); });
  });
  std::unique_ptr<Engine> engine;
  const std::string err = load_warnings(dir, &engine);
  ASSERT_TRUE(engine);
  EXPECT_FALSE(engine->model().has_mtp());
  EXPECT_NE(err.find("glmrt: note:"), std::string::npos) << err;
  EXPECT_NE(err.find("no model.layers.5.eh_proj.weight"), std::string::npos) << err;
  EXPECT_EQ(err.find("warning"), std::string::npos) << err;
}

TEST(ConfigAgainstCheckpoint, TensorsNothingUsesAreListedOnce) {
  // No MTP asked for, but the checkpoint has the MTP layer; and a stray tensor.
  const ModelDir dir([](json& c) { c["num_nextn_predict_layers"] = 0; },
                     [](TensorList& tensors) {
                       tensors.push_back({"model.layers.2.mlp.stray.weight", {4}, {1, 2, 3, 4}});
                     });
  std::unique_ptr<Engine> engine;
  const std::string err = load_warnings(dir, &engine);
  ASSERT_TRUE(engine);
  EXPECT_FALSE(engine->model().has_mtp());
  EXPECT_NE(err.find("not used by this config.json"), std::string::npos) << err;
  EXPECT_NE(err.find("model.layers.2.mlp.stray.weight"), std::string::npos) << err;
  EXPECT_NE(err.find("model.layers.5.* ("), std::string::npos) << err;
  size_t warnings = 0;
  for (size_t at = err.find("glmrt: warning:"); at != std::string::npos;
       at = err.find("glmrt: warning:", at + 1))
    ++warnings;
  EXPECT_EQ(warnings, 1u) << err;
}

TEST(ConfigAgainstCheckpoint, AConsistentCheckpointLoadsWithoutWarnings) {
  const ModelDir dir(no_change);
  std::unique_ptr<Engine> engine;
  EXPECT_EQ(load_warnings(dir, &engine), "");
  EXPECT_TRUE(engine->model().has_mtp());
}

TEST(ConfigAgainstCheckpoint, TiedEmbeddingsUseEmbedTokensAsTransformersDoAndWarn) {
  // The checkpoint has its own lm_head; the config says tie: transformers
  // ties lm_head to embed_tokens and ignores the stored one.
  const ModelDir dir([](json& c) { c["tie_word_embeddings"] = true; });
  std::unique_ptr<Engine> engine;
  const std::string err = load_warnings(dir, &engine);
  EXPECT_NE(err.find("lm_head.weight is ignored"), std::string::npos) << err;
  EXPECT_EQ(err.find("not used by this config.json"), std::string::npos) << err;

  const ReferenceConfig tied = ReferenceConfig::from_json(dir.config());
  const ClearSequence sequence = choose_clear_sequence(tied, dir.tensors(), 8, 1, 3);
  const auto got = runtime_teacher_forced(*engine, sequence.full);
  json untied_config = dir.config();
  untied_config["tie_word_embeddings"] = false;
  const ReferenceResult untied = reference_forward(ReferenceConfig::from_json(untied_config),
                                                   dir.tensors(), sequence.full, false);
  double worst_tied = 0, worst_untied = 0;
  for (size_t t = 0; t < got.size(); ++t)
    for (size_t v = 0; v < got[t].size(); ++v) {
      worst_tied = std::max(worst_tied, std::abs(got[t][v] - sequence.reference.logits[t][v]));
      worst_untied = std::max(worst_untied, std::abs(got[t][v] - untied.logits[t][v]));
    }
  EXPECT_LE(worst_tied, 1e-3);
  EXPECT_GT(worst_untied, 0.1);  // the stored lm_head would have given other logits
}

TEST(ConfigAgainstCheckpoint, ContextBeyondTrainedPositionsWarns) {
  const ModelDir dir([](json& c) { c["max_position_embeddings"] = 1024; });
  const std::string err = load_warnings(dir);  // reference profiles ask for 4096
  EXPECT_NE(err.find("memory.max_context is 4096"), std::string::npos) << err;
  EXPECT_NE(err.find("max_position_embeddings 1024"), std::string::npos) << err;
}

std::function<void(TensorList&)> set_value(const std::string& name, size_t index, float value) {
  return [=](TensorList& tensors) {
    HostTensor* t = find_tensor(tensors, name);
    ASSERT_NE(t, nullptr) << name;
    t->values.at(index) = value;
  };
}

std::unique_ptr<Engine> open_with_profile(const std::filesystem::path& model_dir,
                                          const std::string& profile_name) {
  Profile profile =
      load_profile(std::filesystem::path(GLMRT_SOURCE_DIR) / "configs" / profile_name);
  profile.plugin_paths.insert(profile.plugin_paths.begin(),
                              std::filesystem::path(GLMRT_BUILD_DIR) / "plugins");
  return Engine::open(profile, model_dir);
}

TEST(NonFiniteWeights, ANaNIsRefusedNamingTheTensorAtEveryPrecision) {
  const std::string name = "model.layers.1.self_attn.q_b_proj.weight";
  const ModelDir dir(no_change,
                     set_value(name, 45, std::numeric_limits<float>::quiet_NaN()));  // [1, 5]
  for (const char* profile : {"reference.yaml", "reference-int8.yaml", "nvme.yaml"}) {
    try {
      open_with_profile(dir.path(), profile);
      ADD_FAILURE() << profile << ": the NaN weight loaded";
    } catch (const Error& e) {
      const std::string message = e.what();
      EXPECT_NE(message.find(name), std::string::npos) << profile << ": " << message;
      EXPECT_NE(message.find("nan at [1, 5]"), std::string::npos) << profile << ": " << message;
    }
  }
}

TEST(NonFiniteWeights, AnInfinityInANormOrTheRouterIsRefused) {
  for (const std::string name :
       {"model.layers.3.post_attention_layernorm.weight", "model.layers.3.mlp.gate.weight",
        "model.layers.4.mlp.gate.e_score_correction_bias", "model.embed_tokens.weight"}) {
    const ModelDir dir(no_change, set_value(name, 2, -std::numeric_limits<float>::infinity()));
    const std::string message = load_error(dir);
    EXPECT_NE(message.find(name), std::string::npos) << message;
    EXPECT_NE(message.find("-inf"), std::string::npos) << message;
  }
}

}  // namespace
}  // namespace glmrt::test
