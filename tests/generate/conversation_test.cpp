// Conversation: how a generated answer is stored so the next render of the
// chat template reproduces the tokens the model already saw.
#include <glmrt/base/error.h>
#include <glmrt/generate/conversation.h>

#include <gtest/gtest.h>

namespace glmrt {
namespace {

const text::ModelChatTemplate kConversationTemplate =
    text::ModelChatTemplate::for_model(std::filesystem::path(GLMRT_FIXTURES) / "glm_tiny");

TEST(Conversation, ThinkingAnswerIsSplitAtTheLastThinkClose) {
  Conversation chat({});
  chat.add_user("hi");
  chat.add_assistant("let me see</think>Hello!");
  const auto& m = chat.messages().back();
  EXPECT_EQ(m["role"], "assistant");
  EXPECT_EQ(m["reasoning_content"], "let me see");
  EXPECT_EQ(m["content"], "Hello!");
}

TEST(Conversation, AnAnswerCutOffBeforeThinkCloseIsAllReasoning) {
  Conversation chat({});
  chat.add_user("hi");
  chat.add_assistant("still thinking");
  EXPECT_EQ(chat.messages().back()["reasoning_content"], "still thinking");
  EXPECT_EQ(chat.messages().back()["content"], "");
  chat.replace_last_assistant("still thinking, done</think>Yes.");
  EXPECT_EQ(chat.size(), 2u);
  EXPECT_EQ(chat.messages().back()["reasoning_content"], "still thinking, done");
  EXPECT_EQ(chat.messages().back()["content"], "Yes.");
}

TEST(Conversation, WithoutThinkingTheWholeTextIsTheAnswer) {
  ChatOptions options;
  options.enable_thinking = false;
  Conversation chat(options);
  chat.add_user("hi");
  EXPECT_TRUE(
      chat.render(kConversationTemplate).ends_with("<|user|>hi<|assistant|><think></think>"));
  chat.add_assistant("Hello</think>!");
  EXPECT_EQ(chat.messages().back()["content"], "Hello</think>!");
  EXPECT_EQ(chat.messages().back()["reasoning_content"], "");
}

TEST(Conversation, TheNextRenderExtendsThePromptPlusTheAnswer) {
  for (const bool thinking : {true, false}) {
    ChatOptions options;
    options.enable_thinking = thinking;
    options.system = "Be brief.";
    Conversation chat(options);
    chat.add_user("What is 2+2?");
    const std::string first = chat.render(kConversationTemplate);
    // A stray </think> must stay where the model put it.
    const std::string generated = thinking ? "Add </think>them.</think>4." : "4</think>.";
    chat.add_assistant(generated);
    chat.add_user("And 3+3?");
    const std::string second = chat.render(kConversationTemplate);
    EXPECT_TRUE(second.starts_with(first + generated)) << "thinking=" << thinking << "\n"
                                                       << first << "\n"
                                                       << second;
    EXPECT_TRUE(second.ends_with("<|user|>And 3+3?<|assistant|>" +
                                 std::string(thinking ? "<think>" : "<think></think>")));
    EXPECT_TRUE(first.starts_with("[gMASK]<sop>")) << first;
    EXPECT_NE(first.find("<|system|>Be brief."), std::string::npos) << first;
  }
}

TEST(Conversation, ReasoningEffortAndClearThinkingReachTheTemplate) {
  ChatOptions options;
  options.reasoning_effort = "low";
  options.clear_thinking = true;
  Conversation chat(options);
  chat.add_user("a");
  chat.add_assistant("secret</think>b");
  chat.add_user("c");
  const std::string prompt = chat.render(kConversationTemplate);
  EXPECT_NE(prompt.find("Reasoning Effort: Low"), std::string::npos) << prompt;
  EXPECT_EQ(prompt.find("secret"), std::string::npos) << "cleared reasoning was rendered";
  EXPECT_EQ(chat.request()["chat_template_kwargs"]["reasoning_effort"], "low");
}

TEST(Conversation, ClearForgetsMessagesButKeepsTheSystemPrompt) {
  ChatOptions options;
  options.system = "sys";
  Conversation chat(options);
  chat.add_user("a");
  chat.clear();
  EXPECT_TRUE(chat.empty());
  EXPECT_EQ(chat.request()["messages"].size(), 1u);
}

TEST(Conversation, BadInputIsRejectedClearly) {
  ChatOptions options;
  options.reasoning_effort = "extreme";
  EXPECT_THROW(Conversation{options}, Error);
  Conversation chat({});
  chat.add_user("a");
  EXPECT_THROW(chat.replace_last_assistant("x"), Error);
}

}  // namespace
}  // namespace glmrt
