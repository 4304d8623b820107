// Malformed or unsupported tokenizer.json files give errors naming the file
// and the component; bad input text gives an error, never a crash.
#include <glmrt/base/error.h>
#include <glmrt/text/tokenizer.h>
#include <gtest/gtest.h>

#include <string>

namespace glmrt::text {
namespace {

std::string load_error(std::string_view json) {
  try {
    Tokenizer::from_json_text(json, "bad/tokenizer.json");
  } catch (const glmrt::Error& e) {
    return e.what();
  }
  return "no error";
}

constexpr std::string_view kModel =
    R"("model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": ["a b"]})";

std::string with(std::string_view extra) {
  return "{" + std::string(kModel) + (extra.empty() ? "" : ", ") + std::string(extra) + "}";
}

TEST(TokenizerErrors, NameTheFileAndTheComponent) {
  EXPECT_NE(load_error("{").find("bad/tokenizer.json: invalid JSON"), std::string::npos);
  // Found by fuzz_tokenizer: out_of_range (a number beyond double) escaped unnamed.
  EXPECT_NE(load_error(R"({"version": 1e400})").find("bad/tokenizer.json: invalid JSON"),
            std::string::npos);
  const std::string unsupported = load_error(with(R"("normalizer": {"type": "BertNormalizer"})"));
  EXPECT_NE(unsupported.find("bad/tokenizer.json"), std::string::npos);
  EXPECT_NE(unsupported.find("normalizer"), std::string::npos);
  EXPECT_NE(unsupported.find("BertNormalizer"), std::string::npos);
  EXPECT_NE(
      load_error(
          with(
              R"("pre_tokenizer": {"type": "Sequence", "pretokenizers": [{"type": "Metaspace"}]})"))
          .find("pre_tokenizer.pretokenizers[0]: unsupported pre_tokenizer type 'Metaspace'"),
      std::string::npos);
  EXPECT_NE(load_error(with(R"("decoder": {"type": "WordPiece"})")).find("WordPiece"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"model": {"type": "Unigram", "vocab": []}})").find("Unigram"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"model": {"type": "BPE", "dropout": 0.1, "vocab": {}, "merges": []}})")
                .find("dropout"),
            std::string::npos);
  EXPECT_NE(load_error(R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a z"]}})")
                .find("merges[0]"),
            std::string::npos);
  EXPECT_NE(
      load_error(
          with(
              R"("pre_tokenizer": {"type": "Split", "pattern": {"Regex": "("}, "behavior": "Isolated"})"))
          .find("cannot compile regex"),
      std::string::npos);
  EXPECT_NE(load_error(with(R"("truncation": {"max_length": 5})")).find("truncation"),
            std::string::npos);
}

TEST(TokenizerErrors, MissingFileAndInvalidUtf8Input) {
  EXPECT_THROW(Tokenizer::from_file("/nonexistent/tokenizer.json"), glmrt::Error);
  const Tokenizer tokenizer = Tokenizer::from_json_text(with(""), "tiny");
  EXPECT_EQ(tokenizer.encode("ab"), (std::vector<TokenId>{2}));
  EXPECT_THROW(tokenizer.encode("a\xFF"), glmrt::Error);
  EXPECT_EQ(tokenizer.decode(std::vector<TokenId>{2, 99}), "ab");  // no decoder: tokens joined
}

// Shown by fuzz_tokenizer (UBSan): special-token ids went through
// get<uint32_t>(), undefined for 1e30 and silently 4294967295 for -1.
TEST(TokenizerErrors, PostProcessorIdsMustBeTokenIds) {
  const auto template_with_ids = [](std::string_view ids) {
    return with(R"("post_processor": {"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "X"}}, {"Sequence": {"id": "A"}}],
      "special_tokens": {"X": {"id": "X", "ids": )" +
                std::string(ids) + R"(, "tokens": ["X"]}}})");
  };
  for (const char* ids : {"[1e30]", "[-1]", "[4294967296]", "[0.5]", "7"}) {
    const std::string error = load_error(template_with_ids(ids));
    EXPECT_NE(error.find("bad/tokenizer.json: post_processor.special_tokens.X: 'ids' must be token "
                         "ids"),
              std::string::npos)
        << ids << ": " << error;
  }
  EXPECT_EQ(load_error(template_with_ids("[4294967295]")), "no error");
  EXPECT_NE(load_error(with(R"("post_processor": {"type": "BertProcessing", "sep": ["b", 1],
                                                  "cls": ["a", 4294967296]})"))
                .find("'cls' must be [\"token\", id]"),
            std::string::npos);
}

// Shown by fuzz_tokenizer (out of memory): one vocabulary id near the 2^28
// limit made the id -> token table allocate ~10 GB.
TEST(TokenizerComponents, SparseVocabularyIds) {
  const Tokenizer tokenizer = Tokenizer::from_json_text(
      R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 268435455}, "merges": []}})", "sparse");
  EXPECT_EQ(tokenizer.vocab_size(), 268435456u);
  EXPECT_EQ(tokenizer.encode("ab"), (std::vector<TokenId>{0, 268435455}));
  EXPECT_EQ(tokenizer.id_to_token(268435455), "b");
  EXPECT_EQ(tokenizer.id_to_token(7), std::nullopt);
  EXPECT_EQ(tokenizer.decode(std::vector<TokenId>{0, 7, 268435455}), "a b");
}

TEST(TokenizerComponents, TemplateProcessingAddsSpecialTokens) {
  const Tokenizer tokenizer = Tokenizer::from_json_text(R"({
    "added_tokens": [{"id": 3, "content": "<s>", "special": true}],
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2}, "merges": [["a", "b"]]},
    "post_processor": {"type": "TemplateProcessing",
      "single": [{"SpecialToken": {"id": "<s>", "type_id": 0}}, {"Sequence": {"id": "A", "type_id": 0}}],
      "special_tokens": {"<s>": {"id": "<s>", "ids": [3], "tokens": ["<s>"]}}}})",
                                                        "template");
  EXPECT_EQ(tokenizer.encode("ab", true), (std::vector<TokenId>{3, 2}));
  EXPECT_EQ(tokenizer.encode("ab<s>", false), (std::vector<TokenId>{2, 3}));
  EXPECT_EQ(tokenizer.decode(std::vector<TokenId>{3, 2}, true), "ab");
}

// Added-token ids follow the library: content missing from the model vocab
// gets the next id after the vocabulary (6, then 7), whatever the file says.
TEST(TokenizerComponents, ByteFallbackAndAddedTokenStripping) {
  const Tokenizer tokenizer = Tokenizer::from_json_text(R"({
    "added_tokens": [{"id": 6, "content": "<x>", "special": false, "lstrip": true, "rstrip": true,
                      "normalized": false},
                     {"id": 7, "content": "cat", "special": false, "single_word": true,
                      "normalized": true}],
    "model": {"type": "BPE", "byte_fallback": true,
              "vocab": {"a": 0, "<0xC3>": 1, "<0xA9>": 2, " ": 3, "c": 4, "t": 5},
              "merges": []},
    "decoder": {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]}})",
                                                        "fallback");
  EXPECT_EQ(tokenizer.encode("a\xC3\xA9"), (std::vector<TokenId>{0, 1, 2}));
  EXPECT_EQ(tokenizer.decode(std::vector<TokenId>{0, 1, 2}), "a\xC3\xA9");
  EXPECT_EQ(tokenizer.encode("a <x> a"), (std::vector<TokenId>{0, 6, 0}));
  EXPECT_EQ(tokenizer.encode("cat"), (std::vector<TokenId>{7}));
  EXPECT_EQ(tokenizer.encode("acat"), (std::vector<TokenId>{0, 4, 0, 5}));
}

}  // namespace
}  // namespace glmrt::text
