// --recipe: the quality ladder, and what a recipe makes of each matrix of a
// model with dense and MoE layers and an MTP layer (the user's --override
// rules still win).
#include <glmrt/base/error.h>
#include <glmrt/convert/convert_recipe.h>
#include <glmrt/convert/tensor_roles.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace glmrt {
namespace {

using ::testing::HasSubstr;

WeightPrecision p(const char* name) {
  return require_precision(name, "test");
}

TEST(ConvertRecipe, TheLadderStepsUpToInt8AndNoFurther) {
  EXPECT_EQ(precision_steps_up(p("int2-k16"), 1), p("int3-k32"));
  EXPECT_EQ(precision_steps_up(p("int2-k16"), 2), p("int4-k32"));
  EXPECT_EQ(precision_steps_up(p("int3-k32"), 1), p("int4-k32"));
  EXPECT_EQ(precision_steps_up(p("int4-k32"), 1), p("int8"));
  EXPECT_EQ(precision_steps_up(p("int4-k32"), 3), p("int8"));
  EXPECT_EQ(precision_steps_up(p("int4-g64"), 1), p("int8"));       // between rungs: from below
  EXPECT_EQ(precision_steps_up(p("int3-g128"), 1), p("int3-k32"));  // 3.25 bits: below int3-k32
  EXPECT_EQ(precision_steps_up(p("bf16"), 1), p("bf16"));
  EXPECT_EQ(precision_steps_up(p("int8"), 1), p("int8"));
  EXPECT_EQ(precision_steps_up(p("int2-k16"), 0), p("int2-k16"));
}

TEST(ConvertRecipe, EachMatrixGetsWhatTheRecipeSays) {
  ModelConfig model;
  model.num_hidden_layers = 5;
  model.num_nextn_predict_layers = 1;
  model.mlp_layer_types = {MlpKind::dense, MlpKind::sparse, MlpKind::sparse, MlpKind::sparse,
                           MlpKind::sparse};
  ConvertOptions o;
  o.overrides.push_back({"model.layers.3.mlp.experts.7.up_proj.weight", p("bf16")});
  apply_convert_recipe(find_convert_recipe("q2-mix"), model, o);
  EXPECT_EQ(o.experts, p("int2-k16"));
  EXPECT_EQ(o.dense, p("int8"));
  auto of = [&](int layer, const char* matrix) {
    return precision_name(
        role_precision(o, TensorRole::experts,
                       fmt::format("model.layers.{}.mlp.experts.3.{}.weight", layer, matrix)));
  };
  EXPECT_EQ(of(2, "gate_proj"), "int2-k16");  // a middle MoE layer
  EXPECT_EQ(of(3, "down_proj"), "int3-k32");  // down_proj one step up
  EXPECT_EQ(of(1, "up_proj"), "int3-k32");    // the first MoE layer one step up
  EXPECT_EQ(of(1, "down_proj"), "int4-k32");  // ... and its down_proj one more
  EXPECT_EQ(of(4, "gate_proj"), "int3-k32");  // the last MoE layer
  EXPECT_EQ(of(5, "gate_proj"), "int8");      // the MTP layer at least int8
  EXPECT_EQ(of(5, "down_proj"), "int8");
  EXPECT_EQ(precision_name(role_precision(o, TensorRole::experts,
                                          "model.layers.3.mlp.experts.7.up_proj.weight")),
            "bf16")
      << "the user's --override comes last and wins";
  EXPECT_EQ(precision_name(
                role_precision(o, TensorRole::dense, "model.layers.2.self_attn.q_a_proj.weight")),
            "int8");
}

TEST(ConvertRecipe, AnUnknownNameListsTheRecipes) {
  try {
    find_convert_recipe("q1-mix");
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("--recipe q1-mix: no such recipe"));
    for (const ConvertRecipe& r : convert_recipes()) EXPECT_THAT(e.what(), HasSubstr(r.name));
  }
}

}  // namespace
}  // namespace glmrt
