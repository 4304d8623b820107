// The Jinja2 engine construct by construct: every template of
// tests/fixtures/chat_templates/constructs.jsonl (statements, expressions,
// filters, tests, methods, whitespace control) renders as Python Jinja2
// rendered it, and raises where it raised; then the errors, the bounds on
// hostile templates and the marking of the request's own text.
#include <glmrt/base/error.h>
#include <glmrt/text/jinja_template.h>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "fixture_rows.h"

namespace glmrt::text {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;

std::string render_text(std::string_view source, const nlohmann::ordered_json& variables = {}) {
  const auto object = variables.is_null() ? nlohmann::ordered_json::object() : variables;
  return JinjaTemplate(source, "t.jinja").render(object).text;
}

std::string error_of(std::string_view source, const nlohmann::ordered_json& variables = {}) {
  try {
    render_text(source, variables);
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << source << ": rendered without an error";
  return {};
}

TEST(JinjaEngine, EveryConstructRendersAsPythonJinja2) {
  const auto rows =
      testing::read_json_lines(std::string(GLMRT_FIXTURES) + "/chat_templates/constructs.jsonl");
  ASSERT_GT(rows.size(), 40u);
  for (const auto& row : rows) {
    const std::string source = row.at("template");
    if (row.contains("error")) {
      EXPECT_THAT(error_of(source, row.at("vars")), HasSubstr("t.jinja:1: ")) << source;
      continue;
    }
    try {
      EXPECT_EQ(render_text(source, row.at("vars")), row.at("rendered").get<std::string>())
          << source;
    } catch (const Error& e) {
      ADD_FAILURE() << source << ": " << e.what();
    }
  }
}

TEST(JinjaEngine, ErrorsNameTheTemplateLineAndConstruct) {
  EXPECT_THAT(error_of("a\n{{ 'x' + [1] }}"),
              AllOf(HasSubstr("t.jinja:2: `+`: can only concatenate str (not \"list\") to str")));
  EXPECT_THAT(error_of("{{ 'x' in none }}"),
              HasSubstr("t.jinja:1: `in`: argument of type 'NoneType' is not iterable"));
  EXPECT_THAT(error_of("\n\n{% for m in none %}{% endfor %}"),
              HasSubstr("t.jinja:3: {% for %}: 'NoneType' object is not iterable"));
  EXPECT_THAT(error_of("{{ raise_exception('Conversation roles must alternate') }}"),
              HasSubstr("t.jinja:1: call of `raise_exception`: the template raised an error: "
                        "Conversation roles must alternate"));
  EXPECT_THAT(error_of("{{ x | nosuchfilter }}"), HasSubstr("filter `nosuchfilter`: no filter"));
  EXPECT_THAT(error_of("{{ x is nosuchtest }}"), HasSubstr("test `nosuchtest`: no test"));
  EXPECT_THAT(error_of("{{ u.k }}"), HasSubstr("`.k`: 'u' is undefined"));
  EXPECT_THAT(error_of("{% set x = 1 %}{% set x.y = 2 %}"), HasSubstr("not a namespace()"));
  EXPECT_THAT(error_of("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}"),
              HasSubstr("takes not more than 1 argument"));
}

TEST(JinjaEngine, SyntaxErrorsNameTheLine) {
  EXPECT_THAT(error_of("{% if x %}"), HasSubstr("t.jinja:1: {% if %}: is not closed"));
  EXPECT_THAT(error_of("x\n{% endfor %}"),
              HasSubstr("t.jinja:2: {% endfor %}: is not a statement"));
  EXPECT_THAT(error_of("{{ 1 +  }}"), HasSubstr("expected a value"));
  EXPECT_THAT(error_of("{{ x"), HasSubstr("t.jinja:1: the tag opened here is not closed"));
  EXPECT_THAT(error_of("{# x"), HasSubstr("the comment opened here is not closed"));
  EXPECT_THAT(error_of("\n{{ 'abc }}"), HasSubstr("t.jinja:2: the string literal"));
  EXPECT_THAT(error_of("{{ a ? b }}"), HasSubstr("unexpected character '?'"));
  EXPECT_THAT(error_of("{% frobnicate %}"), HasSubstr("{% frobnicate %}: is not a statement"));
  EXPECT_THAT(error_of("{% raw %}x"), HasSubstr("not closed by `{% endraw %}`"));
}

TEST(JinjaEngine, HostileTemplatesStopWithAClearError) {
  EXPECT_THAT(error_of("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}"),
              HasSubstr("calls nest more than"));
  EXPECT_THAT(error_of("{% set ns = namespace(s='x') %}{% for i in range(40) %}"
                       "{% set ns.s = ns.s ~ ns.s %}{% endfor %}"),
              HasSubstr("MiB"));
  EXPECT_THAT(error_of("{% for i in range(100000000) %}{% endfor %}"),
              HasSubstr("exceeds the bound"));
  EXPECT_THAT(error_of("{{ " + std::string(300, '(') + "1" + std::string(300, ')') + " }}"),
              HasSubstr("nests more than"));
  // Found by the chat_template fuzzer: a 24 GB indent, refused before it is built.
  EXPECT_THAT(error_of("{{ [1] | tojson(indent=24294967295) }}"),
              HasSubstr("tojson: indent 24294967295 would build a value too large"));
  // A wide indent times deep nesting: stopped as the text grows.
  EXPECT_THAT(error_of("{{ " + std::string(100, '[') + std::string(100, ']') +
                       " | tojson(indent=1000000) }}"),
              HasSubstr("tojson: the JSON text would be too large"));
}

// Found by the chat_template fuzzer: `{% set ns.n = ns %}` made a namespace
// own itself, which shared ownership never frees (LeakSanitizer: 232 bytes
// per render). A value that would hold its own container is refused, through
// lists, dicts, namespaces and bound methods; values merely shared are not.
TEST(JinjaEngine, AContainerThatWouldHoldItselfIsRefused) {
  EXPECT_THAT(error_of("{% set ns = namespace(n=0, s='') %}{% for i in [1, 2, 3] %}"
                       "{% set ns.n = ns %}{% endfor %}{{ ns.n }}"),
              HasSubstr("t.jinja:1: {% set %}: `ns.n` would hold the namespace itself"));
  EXPECT_THAT(error_of("{% set l = [] %}{{ l.append(l) }}"),
              HasSubstr("append() would put the list inside itself"));
  EXPECT_THAT(error_of("{% set l = [] %}{% set ns = namespace(x={'k': [l]}) %}{{ l.append(ns) }}"),
              HasSubstr("a reference cycle"));
  EXPECT_THAT(error_of("{% set l = [] %}{% set ns = namespace(f=l.append) %}{{ l.append(ns) }}"),
              HasSubstr("a reference cycle"));
  EXPECT_THAT(error_of("{% set a = namespace() %}{% set b = namespace(a=a) %}{% set a.b = b %}"),
              HasSubstr("`a.b` would hold the namespace itself"));
  EXPECT_EQ(render_text("{% set ns = namespace(items=[]) %}{% for i in [1, 2] %}"
                        "{% set ns.items = ns.items + [i] %}{% endfor %}{{ ns.items }}"),
            "[1, 2]");
  EXPECT_EQ(render_text("{% set a = [1] %}{% set l = [] %}{% set m = [] %}{{ l.append([a, a]) }}"
                        "{{ m.append(l) }}{{ m.append(l) }}{{ m }}"),
            "NoneNoneNone[[[[1], [1]]], [[[1], [1]]]]");
}

// The default bounds are far above what a chat needs; smaller ones show
// each is enforced without running for long.
TEST(JinjaEngine, EachRenderBoundIsEnforced) {
  const nlohmann::ordered_json none = nlohmann::ordered_json::object();
  const JinjaTemplate loops(
      "{% for i in range(100) %}{% for j in range(100) %}{% endfor %}{% endfor %}", "t.jinja");
  EXPECT_NO_THROW(loops.render(none, {}, JinjaLimits{1 << 20, 8, 20'000}));
  EXPECT_THAT(
      [&] {
        try {
          loops.render(none, {}, JinjaLimits{1 << 20, 8, 1000});
        } catch (const Error& e) {
          return std::string(e.what());
        }
        return std::string();
      }(),
      HasSubstr("more than 1000 loop iterations"));
  const JinjaTemplate big("{% for i in range(100) %}0123456789{% endfor %}", "t.jinja");
  EXPECT_EQ(big.render(none, {}, JinjaLimits{1000, 8, 1000}).text.size(), 1000u);
  EXPECT_THROW(big.render(none, {}, JinjaLimits{999, 8, 1000}), Error);
  const JinjaTemplate nested(
      "{% macro f(n) %}{% if n %}{{ f(n - 1) }}{% endif %}{% endmacro %}{{ f(8) }}", "t.jinja");
  EXPECT_NO_THROW(nested.render(none, {}, JinjaLimits{1000, 9, 1000}));
  EXPECT_THROW(nested.render(none, {}, JinjaLimits{1000, 8, 1000}), Error);
  const JinjaTemplate doubling(
      "{% set ns = namespace(s='x') %}{% for i in range(20) %}{% set ns.s = ns.s ~ ns.s %}"
      "{% endfor %}{{ ns.s | length }}",
      "t.jinja");
  EXPECT_EQ(doubling.render(none, {}, JinjaLimits{1000, 8, 1000, 4 << 20}).text, "1048576");
  try {
    doubling.render(none, {}, JinjaLimits{1000, 8, 1000, 1 << 20});
    ADD_FAILURE() << "no bound on the strings built";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("t.jinja:1: `~`: the render built more than 1 MiB of strings"));
  }
}

TEST(JinjaEngine, ATemplateMustBeUtf8) {
  try {
    JinjaTemplate("ab\xc3(", "t.jinja");
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(),
                HasSubstr("t.jinja: not UTF-8 text (an invalid byte sequence at byte 2)"));
  }
  EXPECT_THAT(error_of("{{ 'x' * 100000000 }}"), HasSubstr("MiB"));
}

// Python's ints are unbounded, glmrt's 64-bit: what does not fit is an
// error, never a wrapped value; huge slice steps and repeats are bounded.
TEST(JinjaEngine, IntegerExtremesAreErrorsOrBounded) {
  EXPECT_THAT(error_of("{{ 9223372036854775807 + 1 }}"), HasSubstr("`+`: integer overflow"));
  EXPECT_THAT(error_of("{{ -9223372036854775807 - 2 }}"), HasSubstr("integer overflow"));
  EXPECT_THAT(error_of("{{ 4294967296 * 4294967296 }}"), HasSubstr("integer overflow"));
  EXPECT_THAT(error_of("{{ 2 ** 64 }}"), HasSubstr("integer overflow"));
  EXPECT_EQ(render_text("{{ 2 ** 62 }}|{{ 1 ** 1000 }}|{{ (-1) ** 1001 }}"),
            "4611686018427387904|1|-1");
  EXPECT_THAT(error_of("{{ 99999999999999999999 }}"), HasSubstr("too large"));
  EXPECT_THAT(error_of("{{ range(-9223372036854775807, 9223372036854775807) | length }}"),
              HasSubstr("exceeds the bound"));
  EXPECT_EQ(
      render_text("{{ [1, 2, 3][::9223372036854775807] }}{{ 'abc'[::-9223372036854775807] }}"),
      "[1]c");
  EXPECT_THAT(error_of("{{ 'ab' * 9223372036854775807 }}"), HasSubstr("MiB"));
  EXPECT_THAT(error_of("{{ '{99999999999999999999999}'.format(1) }}"), HasSubstr("no argument"));
}

TEST(JinjaEngine, SourceLineBreaksAndTheFinalNewlineAsJinja2ReadsThem) {
  EXPECT_EQ(render_text("a\r\n{% if true %}\r\nb\r\n{% endif %}\r\n"), "a\nb\n");
  EXPECT_EQ(render_text("a\rb\n"), "a\nb");
  EXPECT_EQ(render_text("a\n\n"), "a\n");
}

TEST(JinjaEngine, GenerationTagsPassThrough) {
  EXPECT_EQ(render_text("{% generation %}gen {{ 1 }}{% endgeneration %}!"), "gen 1!");
}

TEST(JinjaEngine, StrftimeNowFormatsTheCurrentTime) {
  const std::string year = render_text("{{ strftime_now('%Y') }}");
  ASSERT_EQ(year.size(), 4u);
  EXPECT_GE(std::stoi(year), 2024);
}

// The request's strings stay marked wherever the template copies them, so
// special-token text typed by a user is plain text in the prompt.
TEST(JinjaEngine, TheRequestsOwnTextIsMarked) {
  const auto variables = nlohmann::ordered_json::parse(
      R"({"messages": [{"role": "user", "content": "  hi <|user|> "}], "bos": "<s>"})");
  const std::string_view marked[] = {"messages"};
  const JinjaTemplate t(
      "{{ bos }}{% for m in messages %}<|{{ m.role }}|>{{ m.content.strip() }}"
      "{{ m.content | tojson }}{% endfor %}",
      "t.jinja");
  const RenderedChat out = t.render(variables, marked);
  EXPECT_EQ(out.text, "<s><|user|>hi <|user|>\"  hi <|user|> \"");
  // "hi <|user|>" and the JSON text; not the role, from which templates
  // build role tokens ('<|' + role + '|>').
  ASSERT_EQ(out.content.size(), 1u);
  EXPECT_EQ(out.text.substr(out.content[0].begin, out.content[0].end - out.content[0].begin),
            "hi <|user|>\"  hi <|user|> \"");
  EXPECT_TRUE(t.render(variables).content.empty());
}

}  // namespace
}  // namespace glmrt::text
