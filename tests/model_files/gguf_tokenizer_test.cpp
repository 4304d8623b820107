// The tokenizer of a GGUF file against the Hugging Face tokenizers library's
// ids (tests/fixtures/tokenizer/*/expected.jsonl, gguf/glm_demo-expected.jsonl).
// The GLM vocab GGUFs are llama.cpp-layout files; DeepSeek-V3's and Qwen3's
// metadata is built here from their tokenizer.json as convert_hf_to_gguf.py
// builds it (tokens by id, added tokens CONTROL when special or when they look
// special, else USER_DEFINED, "[PAD<i>]" UNUSED up to the model's vocab size),
// which gives the shared vocab GGUFs' arrays exactly.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <glmrt/base/error.h>
#include <glmrt/model_files/gguf.h>
#include <glmrt/model_files/gguf_tokenizer.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

namespace glmrt {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

const std::filesystem::path kFixtures = GLMRT_FIXTURES;

std::vector<nlohmann::json> read_json_lines(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot open " + path.string());
  std::vector<nlohmann::json> rows;
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) rows.push_back(nlohmann::json::parse(line));
  return rows;
}

// Every row: ids as the library gives them, decoded back to its text.
void expect_library_ids(const text::Tokenizer& tokenizer, const std::filesystem::path& expected) {
  const auto rows = read_json_lines(expected);
  ASSERT_EQ(rows.size(), 506u);
  int identical = 0;
  for (const auto& row : rows) {
    const std::string text = row.at("text");
    const auto ids = tokenizer.encode(text);
    const auto want = row.at("ids").get<std::vector<text::TokenId>>();
    EXPECT_EQ(ids, want) << text;
    identical += ids == want;
    if (row.contains("decoded")) {  // glm_demo-expected.jsonl has ids only
      EXPECT_EQ(tokenizer.decode(want), row.at("decoded").get<std::string>()) << text;
    }
  }
  EXPECT_EQ(identical, 506);
}

gguf::Value strings(const std::vector<std::string>& values) {
  return gguf::Value::arr(gguf::Array::of_strings(values));
}
gguf::Value int32s(const std::vector<int32_t>& values) {
  return gguf::Value::arr(gguf::Array::of(gguf::ValueType::int32, values));
}

bool looks_special(const std::string& token) {  // the converter's does_token_look_special
  auto wrapped = [&](std::string_view open, std::string_view close) {
    return token.starts_with(open) && token.ends_with(close);
  };
  return wrapped("<|", "|>") || wrapped("<｜", "｜>") || token == "<pad>" || token == "<mask>";
}

gguf::Metadata metadata_from_tokenizer_json(const std::string& name, size_t vocab_size,
                                            const std::string& pre) {
  std::ifstream in(kFixtures / "tokenizer" / name / "tokenizer.json", std::ios::binary);
  const nlohmann::json tj = nlohmann::json::parse(in);
  std::map<size_t, std::string> by_id;
  for (const auto& [token, id] : tj["model"]["vocab"].items()) by_id[id.get<size_t>()] = token;
  std::map<size_t, const nlohmann::json*> added;
  for (const auto& a : tj["added_tokens"]) {
    by_id[a["id"].get<size_t>()] = a["content"];
    added[a["id"].get<size_t>()] = &a;
  }
  std::vector<std::string> tokens;
  std::vector<int32_t> types;
  for (size_t id = 0; id < vocab_size; ++id) {
    if (!by_id.contains(id)) {
      tokens.push_back("[PAD" + std::to_string(id) + "]");
      types.push_back(5);
    } else {
      tokens.push_back(by_id[id]);
      const bool is_added = added.contains(id);
      types.push_back(!is_added                                               ? 1
                      : ((*added[id])["special"] || looks_special(by_id[id])) ? 3
                                                                              : 4);
    }
  }
  std::vector<std::string> merges;
  for (const auto& m : tj["model"]["merges"])
    merges.push_back(m.is_string() ? m.get<std::string>()
                                   : m[0].get<std::string>() + " " + m[1].get<std::string>());
  gguf::Metadata md(name + "-vocab.gguf");
  md.add("tokenizer.ggml.model", gguf::Value::str("gpt2"));
  md.add("tokenizer.ggml.pre", gguf::Value::str(pre));
  md.add("tokenizer.ggml.tokens", strings(tokens));
  md.add("tokenizer.ggml.token_type", int32s(types));
  md.add("tokenizer.ggml.merges", strings(merges));
  return md;
}

TEST(GgufTokenizer, GlmTinyVocabGgufGivesTheLibrarysIds) {
  const gguf::Model model = gguf::Model::open(kFixtures / "gguf" / "glm_tiny-vocab.gguf");
  const text::Tokenizer tokenizer = gguf::tokenizer_from_gguf(model.metadata());
  expect_library_ids(tokenizer, kFixtures / "tokenizer" / "glm_tiny" / "expected.jsonl");
  EXPECT_EQ(tokenizer.vocab_size(), 1024u);
  EXPECT_EQ(tokenizer.id_to_token(1000), std::nullopt);  // UNUSED: no token, as in tokenizer.json
  EXPECT_TRUE(tokenizer.is_special(1017));               // <|user|>, CONTROL
  const gguf::TokenizerSpecials s = gguf::tokenizer_specials(model.metadata());
  EXPECT_EQ(s.pre, "glm4");
  EXPECT_EQ(s.bos, std::nullopt);  // the file's 1012 ([gMASK]), which llama.cpp ignores for glm4
  EXPECT_EQ(s.eos, 1010u);
  EXPECT_EQ(s.eot, 1017u);
  EXPECT_EQ(s.eom, 1019u);
  EXPECT_EQ(s.pad, 1010u);
  EXPECT_FALSE(s.add_bos);
  EXPECT_EQ(tokenizer.encode("hi", true), tokenizer.encode("hi"));
  EXPECT_FALSE(gguf::chat_template_from_gguf(model.metadata()).has_value());
}

// llama.cpp's converter wrote this synthetic vocabulary (<t0> ... <t1023>,
// pre "default") with the merge "<t 0>", of tokens it does not have: llama.cpp
// keeps it, glmrt refuses it as the library refuses such a tokenizer.json.
TEST(GgufTokenizer, ARealFileWithAMergeOfUnknownTokensIsRefused) {
  const gguf::Model model = gguf::Model::open(kFixtures / "gguf" / "deepseek_v3-IQ2_XXS.gguf");
  EXPECT_TRUE(gguf::has_tokenizer(model.metadata()));
  EXPECT_EQ(gguf::tokenizer_specials(model.metadata()).bos, 0u);
  try {
    gguf::tokenizer_from_gguf(model.metadata());
    FAIL() << "accepted";
  } catch (const Error& e) {
    EXPECT_THAT(std::string(e.what()),
                AllOf(HasSubstr("deepseek_v3-IQ2_XXS.gguf"), HasSubstr("tokenizer.ggml.merges"),
                      HasSubstr("element 0"), HasSubstr("\"<t\"")));
  }
}

TEST(GgufTokenizer, GlmDemoVocabGgufGivesTheLibrarysIds) {
  const gguf::Model model = gguf::Model::open(kFixtures / "gguf" / "glm_demo-vocab.gguf");
  expect_library_ids(gguf::tokenizer_from_gguf(model.metadata()),
                     kFixtures / "gguf" / "glm_demo-expected.jsonl");
}

TEST(GgufTokenizer, DeepSeekV3GivesTheLibrarysIdsAndAddsItsBos) {
  gguf::Metadata md = metadata_from_tokenizer_json("deepseek_v3", 129280, "deepseek-v3");
  md.add("tokenizer.ggml.bos_token_id", gguf::Value::u32(0));
  md.add("tokenizer.ggml.eos_token_id", gguf::Value::u32(1));
  md.add("tokenizer.ggml.add_bos_token", gguf::Value::boolean(true));
  const text::Tokenizer tokenizer = gguf::tokenizer_from_gguf(md);
  expect_library_ids(tokenizer, kFixtures / "tokenizer" / "deepseek_v3" / "expected.jsonl");
  // add_bos_token: BOS first, as llama.cpp and transformers' AutoTokenizer add it.
  const auto with_bos = tokenizer.encode("hello", true);
  ASSERT_FALSE(with_bos.empty());
  EXPECT_EQ(with_bos.front(), 0u);
  EXPECT_EQ(std::vector(with_bos.begin() + 1, with_bos.end()), tokenizer.encode("hello"));
}

TEST(GgufTokenizer, Qwen3GivesTheLibrarysIdsNfcIncluded) {
  const text::Tokenizer tokenizer =
      gguf::tokenizer_from_gguf(metadata_from_tokenizer_json("qwen3", 151936, "qwen2"));
  // llama.cpp differs from the library on 8 of these strings (decomposed
  // text it does not normalize, "<s></s><unk><pad>"); glmrt on none.
  expect_library_ids(tokenizer, kFixtures / "tokenizer" / "qwen3" / "expected.jsonl");
}

TEST(GgufTokenizer, EndOfGenerationIdsAreTheFilesAndTheEndTextsLlamaCppStopsAt) {
  gguf::Metadata md("eog.gguf");
  md.add("tokenizer.ggml.tokens",
         strings({"a", "<|im_end|>", "<|user|>", "<｜end▁of▁sentence｜>", "</s>x", "[EOT]"}));
  md.add("tokenizer.ggml.eos_token_id", gguf::Value::u32(2));
  md.add("tokenizer.ggml.eot_token_id", gguf::Value::u32(2));
  EXPECT_EQ(gguf::end_of_generation_token_ids(md), (std::vector<int32_t>{1, 2, 3, 5}));
  md.add("tokenizer.ggml.eom_token_id", gguf::Value::u32(6));
  EXPECT_THAT(
      [&] { gguf::end_of_generation_token_ids(md); },
      ThrowsMessage<Error>(HasSubstr("eog.gguf: metadata key 'tokenizer.ggml.eom_token_id' is 6")));
  // Without a vocabulary (a file that runs on ids only): the ids as named.
  gguf::Metadata ids_only("ids.gguf");
  ids_only.add("tokenizer.ggml.eos_token_id", gguf::Value::u32(7));
  EXPECT_EQ(gguf::end_of_generation_token_ids(ids_only), (std::vector<int32_t>{7}));
}

}  // namespace
}  // namespace glmrt
