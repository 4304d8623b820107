// GGUF tokenizer keys that do not fit together are refused, naming the file
// and the key, before any tokenizer exists.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <glmrt/base/error.h>
#include <glmrt/model_files/gguf_tokenizer.h>

#include <functional>

namespace glmrt {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

// A tiny valid byte-level vocabulary: "a", "b", "ab", "Ġ", a control token.
struct Keys {
  std::string model = "gpt2", pre = "glm4";
  std::vector<std::string> tokens = {"a", "b", "ab", "Ġ", "<|end|>"};
  std::vector<int32_t> types = {1, 1, 1, 1, 3};
  std::vector<std::string> merges = {"a b"};
  std::function<void(gguf::Metadata&)> extra;

  gguf::Metadata metadata() const {
    gguf::Metadata md("hostile.gguf");
    md.add("tokenizer.ggml.model", gguf::Value::str(model));
    md.add("tokenizer.ggml.pre", gguf::Value::str(pre));
    md.add("tokenizer.ggml.tokens", gguf::Value::arr(gguf::Array::of_strings(tokens)));
    md.add("tokenizer.ggml.token_type",
           gguf::Value::arr(gguf::Array::of(gguf::ValueType::int32, types)));
    md.add("tokenizer.ggml.merges", gguf::Value::arr(gguf::Array::of_strings(merges)));
    if (extra) extra(md);
    return md;
  }
};

std::string refusal(const Keys& keys) {
  try {
    gguf::tokenizer_from_gguf(keys.metadata());
  } catch (const Error& e) {
    return e.what();
  }
  return "(accepted)";
}

TEST(GgufTokenizerHostile, TheValidBaseWorks) {
  const text::Tokenizer tokenizer = gguf::tokenizer_from_gguf(Keys{}.metadata());
  EXPECT_EQ(tokenizer.encode("ab ab<|end|>"), (std::vector<text::TokenId>{2, 3, 2, 4}));
}

TEST(GgufTokenizerHostile, EveryKnownPreTokenizerCompilesAndSplits) {
  for (const char* pre : {"glm4", "chatglm-bpe", "deepseek-v3", "kimi-k2", "qwen2", "default"}) {
    Keys keys;
    keys.pre = pre;
    EXPECT_EQ(gguf::tokenizer_from_gguf(keys.metadata()).encode("ab ab"),
              (std::vector<text::TokenId>{2, 3, 2}))
        << pre;
  }
}

TEST(GgufTokenizerHostile, ArraysOfDifferentLengthsAreRefused) {
  Keys keys;
  keys.types.pop_back();
  EXPECT_THAT(refusal(keys),
              AllOf(HasSubstr("hostile.gguf"), HasSubstr("tokenizer.ggml.token_type"),
                    HasSubstr("4 entries"), HasSubstr("(5)")));
}

TEST(GgufTokenizerHostile, AMergeOfAnUnknownTokenIsRefused) {
  Keys keys;
  keys.merges.push_back("a zz");
  EXPECT_THAT(refusal(keys), AllOf(HasSubstr("tokenizer.ggml.merges"), HasSubstr("element 1"),
                                   HasSubstr("\"zz\"")));
  keys.merges = {"b a"};  // both known, the merged "ba" is not
  EXPECT_THAT(refusal(keys), AllOf(HasSubstr("tokenizer.ggml.merges"), HasSubstr("\"ba\"")));
  keys.merges = {"ab"};
  EXPECT_THAT(refusal(keys), AllOf(HasSubstr("tokenizer.ggml.merges"), HasSubstr("one space")));
}

TEST(GgufTokenizerHostile, AnUnknownPreTokenizerIsRefusedByName) {
  Keys keys;
  keys.pre = "mystery-llm";
  EXPECT_THAT(refusal(keys), AllOf(HasSubstr("tokenizer.ggml.pre"), HasSubstr("'mystery-llm'"),
                                   HasSubstr("deepseek-v3")));
}

TEST(GgufTokenizerHostile, OtherModelsAreRefused) {
  Keys keys;
  keys.model = "llama";
  EXPECT_THAT(refusal(keys),
              AllOf(HasSubstr("tokenizer.ggml.model"), HasSubstr("'llama'"), HasSubstr("gpt2")));
}

TEST(GgufTokenizerHostile, IdsOutOfRangeAreRefused) {
  Keys keys;
  keys.extra = [](gguf::Metadata& md) {
    md.add("tokenizer.ggml.bos_token_id", gguf::Value::u32(5));
  };
  EXPECT_THAT(refusal(keys), AllOf(HasSubstr("tokenizer.ggml.bos_token_id"), HasSubstr("below 5")));
  keys.extra = [](gguf::Metadata& md) {
    md.add("tokenizer.ggml.eos_token_id", gguf::Value::i32(-1));
  };
  EXPECT_THAT(refusal(keys), HasSubstr("tokenizer.ggml.eos_token_id"));
}

TEST(GgufTokenizerHostile, BadTokenTypesAndDuplicatesAreRefused) {
  Keys keys;
  keys.types[1] = 9;
  EXPECT_THAT(refusal(keys), AllOf(HasSubstr("tokenizer.ggml.token_type"), HasSubstr("element 1"),
                                   HasSubstr("from 1 to 6")));
  keys = Keys{};
  keys.tokens[3] = "a";
  EXPECT_THAT(refusal(keys), AllOf(HasSubstr("tokenizer.ggml.tokens"), HasSubstr("twice"),
                                   HasSubstr("elements 0 and 3")));
}

TEST(GgufTokenizerHostile, AddingABosThatIsUnusedIsRefused) {
  Keys keys;
  keys.pre = "qwen2";
  keys.types[4] = 5;
  keys.extra = [](gguf::Metadata& md) {
    md.add("tokenizer.ggml.bos_token_id", gguf::Value::u32(4));
    md.add("tokenizer.ggml.add_bos_token", gguf::Value::boolean(true));
  };
  EXPECT_THAT(refusal(keys), AllOf(HasSubstr("tokenizer.ggml.bos_token_id"), HasSubstr("unused")));
}

}  // namespace
}  // namespace glmrt
