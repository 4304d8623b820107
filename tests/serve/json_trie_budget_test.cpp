// The vocabulary trie of JSON answers is memory the server holds: charged to
// the budget when the first JSON request builds it, released with it, and a
// budget that cannot hold it refuses the build (and the next call tries again).
#include <glmrt/base/error.h>
#include <glmrt/serve/json_output.h>

#include <gtest/gtest.h>

namespace glmrt::serve {
namespace {

const text::Tokenizer& tiny_tokenizer() {
  static const text::Tokenizer t = text::Tokenizer::from_file(
      std::filesystem::path(GLMRT_FIXTURES) / "glm_tiny" / "tokenizer.json");
  return t;
}

TEST(JsonTrieBudget, TheTrieIsChargedWhenBuiltAndReleasedWithIt) {
  MemoryBudget budget;
  {
    SharedTokenTrie trie(tiny_tokenizer(), 1024, &budget);
    EXPECT_EQ(budget.used(), 0u) << "nothing is built before a JSON request";
    const auto built = trie.get();
    ASSERT_TRUE(built);
    EXPECT_GT(built->memory_bytes(), 1024u * sizeof(int32_t));
    EXPECT_EQ(budget.by_category().at("JSON grammar trie"), built->memory_bytes());
    EXPECT_EQ(trie.get(), built) << "built once";
    EXPECT_EQ(budget.used(), built->memory_bytes());
  }
  EXPECT_EQ(budget.used(), 0u);
}

TEST(JsonTrieBudget, ABudgetThatCannotHoldItRefusesTheBuild) {
  MemoryBudget budget(1024);
  SharedTokenTrie trie(tiny_tokenizer(), 1024, &budget);
  EXPECT_THROW(trie.get(), Error);
  EXPECT_EQ(budget.used(), 0u);
  budget.set_limit(0);  // unlimited: the next request builds it
  EXPECT_TRUE(trie.get());
  EXPECT_GT(budget.used(), 0u);
}

}  // namespace
}  // namespace glmrt::serve
