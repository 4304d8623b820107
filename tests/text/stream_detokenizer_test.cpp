#include <glmrt/text/stream_detokenizer.h>
#include <gtest/gtest.h>

#include "fixture_rows.h"

namespace glmrt::text {
namespace {

using testing::read_json_lines;
using testing::tokenizer_fixture;

bool is_valid_utf8(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b = static_cast<unsigned char>(s[i]);
    const std::size_t n = b < 0x80         ? 1
                          : (b >> 5) == 6  ? 2
                          : (b >> 4) == 14 ? 3
                          : (b >> 3) == 30 ? 4
                                           : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (std::size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

// The byte-level token id of one raw byte (GPT-2 bytes_to_unicode spelling).
TokenId byte_token(const Tokenizer& tokenizer, unsigned char byte) {
  std::string symbol;
  int extra = 0;
  for (int b = 0; b < 256; ++b) {
    const bool printable = (b >= '!' && b <= '~') || (b >= 0xA1 && b <= 0xAC) || b >= 0xAE;
    const int cp = printable ? b : 256 + extra++;
    if (b == byte) {
      if (cp < 0x80)
        symbol.push_back(static_cast<char>(cp));
      else {
        symbol.push_back(static_cast<char>(0xC0 | (cp >> 6)));
        symbol.push_back(static_cast<char>(0x80 | (cp & 0x3F)));
      }
    }
  }
  const auto id = tokenizer.token_to_id(symbol);
  if (!id) throw std::runtime_error("no byte token");
  return *id;
}

TEST(StreamDetokenizer, HoldsAnEmojiSplitAcrossByteTokens) {
  const Tokenizer tokenizer = Tokenizer::from_file(tokenizer_fixture("glm_tiny/tokenizer.json"));
  // "a😊b" with the emoji's four bytes as four separate byte tokens.
  const std::vector<TokenId> ids = {*tokenizer.token_to_id("a"), byte_token(tokenizer, 0xF0),
                                    byte_token(tokenizer, 0x9F), byte_token(tokenizer, 0x98),
                                    byte_token(tokenizer, 0x8A), *tokenizer.token_to_id("b")};
  StreamDetokenizer stream(tokenizer);
  std::vector<std::string> pieces;
  for (const TokenId id : ids) pieces.push_back(stream.push(id));
  EXPECT_EQ(pieces, (std::vector<std::string>{"a", "", "", "", "\xF0\x9F\x98\x8A", "b"}));
  EXPECT_EQ(stream.flush(), "");
}

TEST(StreamDetokenizer, FlushReleasesAnUnfinishedCharacterAsReplacement) {
  const Tokenizer tokenizer = Tokenizer::from_file(tokenizer_fixture("glm_tiny/tokenizer.json"));
  StreamDetokenizer stream(tokenizer);
  EXPECT_EQ(stream.push(byte_token(tokenizer, 0xE4)), "");
  EXPECT_EQ(stream.push(byte_token(tokenizer, 0xB8)), "");
  EXPECT_EQ(stream.flush(), "\xEF\xBF\xBD");
}

// A SentencePiece-style tokenizer whose unknown characters fall back to
// <0xAB> byte tokens, decoded by ByteFallback + Fuse (as Llama files do).
Tokenizer byte_fallback_tokenizer() {
  return Tokenizer::from_json_text(R"({
    "model": {"type": "BPE", "byte_fallback": true, "merges": [],
              "vocab": {"<0xC3>": 0, "<0xA9>": 1, "<0x3C>": 2, "<0x73>": 3, "<0x3E>": 4,
                        "a": 5, "<0x41>": 6, "<0xFF>": 7}},
    "decoder": {"type": "Sequence", "decoders": [{"type": "ByteFallback"}, {"type": "Fuse"}]}
  })",
                                   "byte_fallback.json");
}

// Found by fuzz_tokenizer: after "é" (<0xC3> <0xA9>) the stream kept only
// <0xA9> as context, so the next byte tokens decoded in a run that starts
// mid-character, and "<s>" came out as three U+FFFD.
TEST(StreamDetokenizer, ByteFallbackContextStartsAtACharacter) {
  const Tokenizer tokenizer = byte_fallback_tokenizer();
  const std::vector<TokenId> ids = {5, 0, 1, 2, 3, 4, 5};  // "aé<s>a"
  StreamDetokenizer stream(tokenizer);
  std::string text;
  for (const TokenId id : ids) text += stream.push(id);
  text += stream.flush();
  EXPECT_EQ(tokenizer.decode(ids), "a\xC3\xA9<s>a");
  EXPECT_EQ(text, tokenizer.decode(ids));
}

// A byte that makes its run invalid turns the whole run into U+FFFD in
// decode(), bytes already streamed included; the stream cannot take "A" back
// but returns valid UTF-8 from where the text differs.
TEST(StreamDetokenizer, ALaterInvalidByteKeepsPiecesValid) {
  const Tokenizer tokenizer = byte_fallback_tokenizer();
  StreamDetokenizer stream(tokenizer);
  EXPECT_EQ(stream.push(6), "A");
  EXPECT_EQ(stream.push(7), "");
  const std::string last = stream.push(5);
  EXPECT_TRUE(is_valid_utf8(last));
  EXPECT_EQ(last, tokenizer.decode(std::vector<TokenId>{6, 7, 5}));
  EXPECT_EQ(last,
            "\xEF\xBF\xBD\xEF\xBF\xBD"
            "a");
}

// Found by fuzz_tokenizer (a timeout): ids whose text never stops ending in
// U+FFFD were held forever, and every push decoded all of them again, so a
// long run cost quadratic time. At most 16 are held now.
TEST(StreamDetokenizer, HoldsAtMostSixteenIds) {
  const Tokenizer tokenizer = byte_fallback_tokenizer();
  const std::vector<TokenId> ids(40, 7);  // <0xFF>: never valid UTF-8
  StreamDetokenizer stream(tokenizer);
  std::string text;
  std::vector<std::size_t> settled_at;
  for (std::size_t i = 0; i < ids.size(); ++i) {
    const std::string piece = stream.push(ids[i]);
    if (!piece.empty()) settled_at.push_back(i + 1);
    text += piece;
  }
  text += stream.flush();
  EXPECT_EQ(settled_at, (std::vector<std::size_t>{16, 32}));
  EXPECT_EQ(text, tokenizer.decode(ids));
}

// Found by fuzz_tokenizer: once sixteen unknown ids were settled, one of them
// was the only context left, so a tokenizer without a decoder (tokens joined
// by spaces) lost the space before the next token.
TEST(StreamDetokenizer, ContextReachesBackPastIdsWithoutText) {
  const Tokenizer tokenizer = Tokenizer::from_json_text(
      R"({"model": {"type": "BPE", "vocab": {"a": 0, "b": 1}, "merges": []}})", "no_decoder.json");
  std::vector<TokenId> ids(18, 99);  // unknown: decode() skips them
  ids.front() = 0;
  ids.back() = 1;
  StreamDetokenizer stream(tokenizer);
  std::string text;
  for (const TokenId id : ids) text += stream.push(id);
  text += stream.flush();
  EXPECT_EQ(tokenizer.decode(ids), "a b");
  EXPECT_EQ(text, "a b");
}

class StreamMatchesDecode : public ::testing::TestWithParam<std::string> {};

// Streaming every fixture row id by id gives valid UTF-8 pieces whose
// concatenation is the whole-sequence decode.
TEST_P(StreamMatchesDecode, OnEveryFixtureRow) {
  const Tokenizer tokenizer =
      Tokenizer::from_file(tokenizer_fixture(GetParam() + "/tokenizer.json"));
  int held_back = 0;
  for (const auto& row : read_json_lines(tokenizer_fixture(GetParam() + "/expected.jsonl"))) {
    const auto ids = row["ids"].get<std::vector<TokenId>>();
    for (const bool skip : {false, true}) {
      StreamDetokenizer stream(tokenizer, skip);
      std::string text;
      for (const TokenId id : ids) {
        const std::string piece = stream.push(id);
        ASSERT_TRUE(is_valid_utf8(piece)) << row["text"];
        held_back += piece.empty();
        text += piece;
      }
      text += stream.flush();
      ASSERT_EQ(text, tokenizer.decode(ids, skip)) << row["text"];
    }
  }
  EXPECT_GT(held_back, 0);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, StreamMatchesDecode,
                         ::testing::Values("deepseek_v3", "qwen3", "glm_tiny"));

}  // namespace
}  // namespace glmrt::text
