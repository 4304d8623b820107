// A text encoded a chunk at a time gives exactly the ids of encoding it
// whole, for every fixture tokenizer: `glmrt tokenize` and the perplexity,
// calibration and validation texts are read so (issue 34).
#include <glmrt/base/error.h>
#include <glmrt/text/chunked_encoder.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "fixture_rows.h"

namespace glmrt::text {
namespace {

using testing::read_json_lines;
using testing::tokenizer_fixture;

// Every fixture row's text (every script, number, space and special token
// the fixtures try), joined by line breaks and by spaces so both kinds of cut
// fall between and inside them.
std::string fixture_text(const std::string& name) {
  std::string text;
  int row = 0;
  for (const auto& line : read_json_lines(tokenizer_fixture(name + "/expected.jsonl")))
    text += line["text"].get<std::string>() + (++row % 3 == 0 ? " word " : "\n");
  return text;
}

struct Chunked {
  std::vector<TokenId> ids;
  std::size_t most_pending = 0;
};

// `text` pushed in pieces of `piece` bytes into an encoder of `chunk` bytes.
Chunked encode_in_chunks(const Tokenizer& tokenizer, std::string_view text, bool special,
                         std::size_t chunk, std::size_t piece) {
  ChunkedEncoder encoder(tokenizer, special, chunk);
  Chunked out;
  for (std::size_t at = 0; at < text.size(); at += piece) {
    encoder.push(text.substr(at, piece), out.ids);
    out.most_pending = std::max(out.most_pending, encoder.pending_bytes());
  }
  encoder.finish(out.ids);
  return out;
}

class ChunkedEncoderFixtures : public ::testing::TestWithParam<std::string> {};

TEST_P(ChunkedEncoderFixtures, IdsMatchEncodingTheWholeText) {
  const Tokenizer tokenizer =
      Tokenizer::from_file(tokenizer_fixture(GetParam() + "/tokenizer.json"));
  const TextCuts cuts = safe_cuts(tokenizer);
  // Otherwise every text would be held whole and the test would prove nothing.
  ASSERT_TRUE(cuts.after_line_break);
  ASSERT_TRUE(cuts.before_space);
  const std::string text = fixture_text(GetParam());
  for (const bool special : {false, true}) {
    const std::vector<TokenId> whole = tokenizer.encode(text, special);
    for (const auto& [chunk, piece] : {std::pair<std::size_t, std::size_t>{16, 5},
                                       {7, 3},
                                       {64, 61},
                                       {1000, 4096},
                                       {std::size_t{1} << 20, 1000}}) {
      const Chunked chunked = encode_in_chunks(tokenizer, text, special, chunk, piece);
      EXPECT_EQ(chunked.ids, whole) << "chunk " << chunk << ", pieces of " << piece
                                    << (special ? ", with special tokens" : "");
      if (chunk < 100) {
        EXPECT_LT(chunked.most_pending, text.size() / 4);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Tokenizers, ChunkedEncoderFixtures,
                         ::testing::Values("glm_tiny", "qwen3", "deepseek_v3"));

// A long text is held a chunk (and the rest of its line) at a time.
TEST(ChunkedEncoder, HoldsAboutAChunkOfALongText) {
  const Tokenizer tokenizer = Tokenizer::from_file(tokenizer_fixture("glm_tiny/tokenizer.json"));
  std::string line;
  for (int i = 0; i < 50; ++i) line += "Lorem ipsum, dolor sit amet " + std::to_string(i) + ".";
  std::string text;
  while (text.size() < (512u << 10)) text += line + "\n";
  const Chunked chunked = encode_in_chunks(tokenizer, text, false, 16 << 10, 1 << 12);
  EXPECT_LE(chunked.most_pending, 2u * (16 << 10) + line.size());
  EXPECT_EQ(chunked.ids, tokenizer.encode(text));
}

// Invalid UTF-8 is refused with its offset in the whole text, not the chunk.
TEST(ChunkedEncoder, InvalidUtf8NamesItsOffsetInTheWholeText) {
  const Tokenizer tokenizer = Tokenizer::from_file(tokenizer_fixture("glm_tiny/tokenizer.json"));
  std::string text;
  for (int i = 0; i < 100; ++i) text += "line\n";
  text += "bad \xff byte\nmore\n";
  std::vector<TokenId> ids;
  try {
    ChunkedEncoder encoder(tokenizer, false, 16);
    encoder.push(text, ids);
    encoder.finish(ids);
    FAIL() << "invalid UTF-8 accepted";
  } catch (const glmrt::Error& e) {
    EXPECT_NE(std::string(e.what()).find("byte offset 504"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace glmrt::text
