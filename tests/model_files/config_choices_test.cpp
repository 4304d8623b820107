// Keys that change the math but have one value glmrt computes are refused
// when they say otherwise, naming the key; nesting beyond the JSON bound is
// refused naming the file.
#include <gtest/gtest.h>

#include <glmrt/model_files/model_config.h>
#include "config_test_util.h"

namespace glmrt {
namespace {

using nlohmann::json;
using test::ConfigVariant;

TEST(ConfigChoices, HiddenActOtherThanSiluIsRefused) {
  ConfigVariant([](json& c) {
    c["hidden_act"] = "gelu";
  }).expect_refused({"'hidden_act'", "\"gelu\"", "\"silu\""});
  EXPECT_NO_THROW(ConfigVariant([](json& c) { c["hidden_act"] = "swish"; }).load());
  ConfigVariant([](json& c) { c["hidden_act"] = 3; }).expect_refused({"'hidden_act'", "string"});
}

TEST(ConfigChoices, ScoringFuncOtherThanSigmoidIsRefused) {
  ConfigVariant([](json& c) {
    c["scoring_func"] = "softmax";
  }).expect_refused({"'scoring_func'", "\"softmax\"", "\"sigmoid\""});
}

TEST(ConfigChoices, TopkMethodOtherThanNoauxTcIsRefused) {
  ConfigVariant([](json& c) {
    c["topk_method"] = "greedy";
  }).expect_refused({"'topk_method'", "\"greedy\"", "\"noaux_tc\""});
}

TEST(ConfigChoices, AbsentKeysMeanTheSupportedDefaults) {
  EXPECT_NO_THROW(ConfigVariant([](json& c) {
                    c.erase("hidden_act");
                    c.erase("scoring_func");
                    c.erase("topk_method");
                  }).load());
}

TEST(ConfigChoices, NestingBeyondTheBoundIsRefusedNamingTheKey) {
  ConfigVariant variant([](json& c) {
    json deep = 1;
    for (int i = 0; i < 300; ++i) deep = json::array({deep});
    c["quantization_config"] = deep;
  });
  variant.expect_refused({"`quantization_config[0][0]", "more than 256 levels"});
}

}  // namespace
}  // namespace glmrt
