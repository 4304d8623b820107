// The official `@anthropic-ai/sdk` client against `glmrt serve`'s /v1/messages
// on the tiny fixture (random weights: the text is noise, the shapes are
// checked): messages.create, a stream with thinking and text and one with a
// tool call, a tool_result round trip, stop_sequences, countTokens, the API key sent as
// x-api-key, and refused fields as APIErrors in Anthropic's shape.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import Anthropic from "@anthropic-ai/sdk";
import { startServer } from "./glmrt_server.mjs";

const KEY = "test-key";
let server;
let client;

before(async () => {
  server = await startServer(["--api-key", KEY, "--max-tokens", "256"]);
  client = new Anthropic({ baseURL: server.url, apiKey: KEY, maxRetries: 0, timeout: 120000 });
});

after(async () => {
  const { code, signal } = await server.stop();
  assert.equal(signal, null, "the server was killed");
  assert.equal(code, 0, "the server exits cleanly on SIGTERM");
});

const hello = [{ role: "user", content: "Hello, who are you?" }];
const noThinking = { type: "disabled" };
const tools = [
  { name: "get_weather", description: "weather of a city",
    input_schema: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
  { name: "get_time", input_schema: { type: "object", properties: {} } },
];

async function apiError(promise) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof Anthropic.APIError, `expected an APIError, got ${e}`);
    return e;
  }
  assert.fail("the request succeeded");
}

test("messages.create: a message with thinking, stop_reason and usage", async () => {
  const m = await client.messages.create({ model: "glm", max_tokens: 6, messages: hello,
    system: "Be brief.", temperature: 0 });
  assert.match(m.id, /^msg_/);
  assert.equal(m.type, "message");
  assert.equal(m.role, "assistant");
  assert.equal(m.model, "glm_tiny");
  // Thinking is on by default (as on /v1/chat/completions): the answer starts with it.
  assert.equal(m.content[0].type, "thinking", JSON.stringify(m.content));
  assert.ok(["end_turn", "max_tokens"].includes(m.stop_reason), m.stop_reason);
  assert.equal(m.stop_sequence, null);
  assert.ok(m.usage.input_tokens + m.usage.cache_read_input_tokens > 5, JSON.stringify(m.usage));
  assert.ok(m.usage.output_tokens >= 1 && m.usage.output_tokens <= 6);
  if (m.stop_reason === "max_tokens") assert.equal(m.usage.output_tokens, 6);
});

test("a stream's events add up to the message the same request answers whole", async () => {
  const params = { model: "glm", max_tokens: 12, messages: hello, temperature: 0 };
  for (const thinking of [undefined, noThinking]) {
    const whole = await client.messages.create({ ...params, thinking });
    const stream = client.messages.stream({ ...params, thinking });
    const types = [];
    let text = "";
    stream.on("streamEvent", (event) => types.push(event.type));
    stream.on("text", (delta) => (text += delta));
    const streamed = await stream.finalMessage();
    assert.equal(types[0], "message_start");
    assert.equal(types.at(-1), "message_stop");
    assert.equal(types.at(-2), "message_delta");
    assert.ok(types.includes("content_block_start") && types.includes("content_block_delta"), types.join());
    assert.deepEqual(streamed.content, whole.content);
    assert.equal(streamed.stop_reason, whole.stop_reason);
    assert.equal(streamed.usage.output_tokens, whole.usage.output_tokens);
    const answer = whole.content.filter((b) => b.type === "text").map((b) => b.text).join("");
    assert.equal(text, answer);
    if (thinking) assert.ok(whole.content.every((b) => b.type === "text"), JSON.stringify(whole.content));
  }
});

test("a named tool_choice streams a tool_use block with its input", async () => {
  const stream = client.messages.stream({ model: "glm", max_tokens: 10, messages:
    [{ role: "user", content: "What time is it?" }], tools, tool_choice: { type: "tool", name: "get_time" },
    thinking: noThinking });
  const deltas = [];
  stream.on("streamEvent", (e) => {
    if (e.type === "content_block_delta") deltas.push(e.delta.type);
  });
  const m = await stream.finalMessage();
  const uses = m.content.filter((b) => b.type === "tool_use");
  assert.equal(uses.length >= 1, true, JSON.stringify(m.content));
  assert.equal(uses[0].name, "get_time");
  assert.match(uses[0].id, /^toolu_/);
  assert.equal(typeof uses[0].input, "object");
  assert.ok(deltas.includes("input_json_delta"), deltas.join());
  // Cut by max_tokens (the tiny model rarely closes a call): max_tokens, still the call.
  assert.equal(m.stop_reason, m.usage.output_tokens === 10 ? "max_tokens" : "tool_use");
});

test("a tool_result round trip is read back into the conversation", async () => {
  const m = await client.messages.create({ model: "glm", max_tokens: 4, tools, thinking: noThinking,
    messages: [
      { role: "user", content: "Weather in Paris?" },
      { role: "assistant", content: [{ type: "text", text: "Let me look." },
        { type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Paris" } }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "sunny",
        cache_control: { type: "ephemeral" } }] },
    ] });
  assert.equal(m.type, "message");
  const shorter = await client.messages.create({ model: "glm", max_tokens: 4, tools, thinking: noThinking,
    messages: [{ role: "user", content: "Weather in Paris?" }] });
  // The call and its result are part of the prompt.
  assert.ok(m.usage.input_tokens + m.usage.cache_read_input_tokens >
    shorter.usage.input_tokens + shorter.usage.cache_read_input_tokens + 10);
});

test("stop_sequences end the text before them", async () => {
  const params = { model: "glm", max_tokens: 24, messages: hello, temperature: 0, thinking: noThinking };
  const full = (await client.messages.create(params)).content.map((b) => b.text).join("");
  assert.ok(full.length > 8, `a long enough greedy text: ${JSON.stringify(full)}`);
  const stop = full.slice(5, 8);
  const m = await client.messages.create({ ...params, stop_sequences: [stop, "never-appears"] });
  assert.equal(m.content.map((b) => b.text).join(""), full.slice(0, full.indexOf(stop)));
  assert.equal(m.stop_reason, "stop_sequence");
  assert.equal(m.stop_sequence, stop);
});

test("messages.countTokens counts the prompt the same request runs", async () => {
  const params = { model: "glm", messages: hello, system: "Be brief.", tools, thinking: noThinking };
  const { input_tokens } = await client.messages.countTokens(params);
  const m = await client.messages.create({ ...params, max_tokens: 1 });
  assert.equal(input_tokens, m.usage.input_tokens + m.usage.cache_read_input_tokens);
  const e = await apiError(client.messages.countTokens({ ...params, stream: true }));
  assert.equal(e.status, 400);
  assert.ok(e.error.error.message.includes("`stream` is not a field of /v1/messages/count_tokens"),
    e.error.error.message);
});

test("fields not implemented are refused with 400 naming them, in Anthropic's shape", async () => {
  const cases = [
    [{ container: "c" }, "container"],
    [{ tools: [{ type: "web_search_20250305", name: "web_search" }] }, "tools[0].type"],
    [{ messages: [{ role: "user", content: [{ type: "image", source: { type: "url", url: "x" } }] }] },
      "messages[0].content[0]"],
  ];
  for (const [extra, field] of cases) {
    const e = await apiError(client.messages.create({ model: "glm", max_tokens: 4, messages: hello, ...extra }));
    assert.equal(e.status, 400);
    assert.equal(e.error.type, "error", JSON.stringify(e.error));
    assert.equal(e.error.error.type, "invalid_request_error");
    assert.ok(e.error.error.message.includes(`\`${field}\``), e.error.error.message);
  }
  const wrongKey = new Anthropic({ baseURL: server.url, apiKey: "wrong", maxRetries: 0 });
  const e = await apiError(wrongKey.messages.create({ model: "glm", max_tokens: 4, messages: hello }));
  assert.equal(e.status, 401);
  assert.equal(e.error.error.type, "authentication_error");
});
