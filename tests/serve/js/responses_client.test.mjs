// The official `openai` npm client against `glmrt serve`'s /v1/responses on
// the tiny fixture (random weights: the text is noise, the shapes are
// checked): responses.create with a reasoning item, a stream whose numbered
// events add up to the same response, a function tool round trip, a
// json_schema text.format, and refused fields as APIErrors naming them.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { startServer } from "./glmrt_server.mjs";

const KEY = "test-key";
let server;
let client;

before(async () => {
  server = await startServer(["--api-key", KEY, "--max-tokens", "256"]);
  client = new OpenAI({ baseURL: server.url + "/v1", apiKey: KEY, maxRetries: 0, timeout: 120000 });
});

after(async () => {
  const { code, signal } = await server.stop();
  assert.equal(signal, null, "the server was killed");
  assert.equal(code, 0, "the server exits cleanly on SIGTERM");
});

const tools = [
  { type: "function", name: "get_weather", description: "weather of a city",
    parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] } },
  { type: "function", name: "get_time", parameters: { type: "object", properties: {} } },
];

async function apiError(promise) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof OpenAI.APIError, `expected an APIError, got ${e}`);
    return e;
  }
  assert.fail("the request succeeded");
}

test("responses.create: a reasoning item, status and usage", async () => {
  const r = await client.responses.create({ model: "m", input: "Hello, who are you?",
    instructions: "Be brief.", max_output_tokens: 6, temperature: 0, reasoning: { effort: "low" } });
  assert.match(r.id, /^resp_/);
  assert.equal(r.object, "response");
  assert.equal(r.model, "glm_tiny");
  assert.equal(r.instructions, "Be brief.");
  // Thinking is on: the answer starts with it, as a reasoning item's summary.
  assert.equal(r.output[0].type, "reasoning", JSON.stringify(r.output));
  assert.equal(r.output[0].summary[0].type, "summary_text");
  assert.ok(r.usage.input_tokens > 5 && r.usage.output_tokens <= 6, JSON.stringify(r.usage));
  if (r.usage.output_tokens === 6) {
    assert.equal(r.status, "incomplete");
    assert.equal(r.incomplete_details.reason, "max_output_tokens");
  } else {
    assert.equal(r.status, "completed");
  }
});

test("a stream's numbered events add up to the response the same request answers whole", async () => {
  const params = { model: "m", input: [{ role: "user", content: [{ type: "input_text", text: "Hi there" }] }],
    max_output_tokens: 12, temperature: 0 };
  for (const reasoning of [undefined, { effort: "none" }]) {
    const whole = await client.responses.create({ ...params, reasoning });
    const stream = await client.responses.create({ ...params, reasoning, stream: true });
    const events = [];
    for await (const event of stream) events.push(event);
    assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
    assert.equal(events[0].type, "response.created");
    assert.equal(events[1].type, "response.in_progress");
    const last = events.at(-1);
    assert.equal(last.type, whole.status === "completed" ? "response.completed" : "response.incomplete");
    assert.deepEqual(last.response.output.map((o) => o.type), whole.output.map((o) => o.type));
    const text = events.filter((e) => e.type === "response.output_text.delta").map((e) => e.delta).join("");
    assert.equal(text, whole.output_text);
    const summary = events.filter((e) => e.type === "response.reasoning_summary_text.delta")
      .map((e) => e.delta).join("");
    const wholeSummary = whole.output.filter((o) => o.type === "reasoning")
      .map((o) => o.summary.map((s) => s.text).join("")).join("");
    assert.equal(summary, wholeSummary);
    if (reasoning) assert.ok(whole.output.every((o) => o.type === "message"), JSON.stringify(whole.output));
  }
  // The client's stream helper accumulates the same events.
  const helper = client.responses.stream({ ...params, reasoning: { effort: "none" } });
  const final = await helper.finalResponse();
  assert.equal(final.output.at(-1).type, "message");
});

test("a function tool round trip: a named call, then its output read back", async () => {
  const r = await client.responses.create({ model: "m", input: "What time is it?", tools,
    tool_choice: { type: "function", name: "get_time" }, max_output_tokens: 10, reasoning: { effort: "none" } });
  const calls = r.output.filter((o) => o.type === "function_call");
  assert.equal(calls.length >= 1, true, JSON.stringify(r.output));
  assert.equal(calls[0].name, "get_time");
  assert.match(calls[0].call_id, /^call_/);
  assert.equal(typeof calls[0].arguments, "string");
  // Cut by max_output_tokens (the tiny model rarely closes a call): the call is still there, marked.
  assert.equal(calls.at(-1).status, r.status === "incomplete" ? "incomplete" : "completed");
  const next = await client.responses.create({ model: "m", tools, max_output_tokens: 4, reasoning: { effort: "none" },
    input: [{ role: "user", content: "What time is it?" }, ...calls,
      { type: "function_call_output", call_id: calls[0].call_id, output: "noon" }] });
  assert.equal(next.object, "response");
  assert.ok(next.usage.input_tokens > r.usage.input_tokens, "the call and its output are in the prompt");
});

test("text.format json_schema constrains the answer", async () => {
  const r = await client.responses.create({ model: "m", input: "Is it sunny?", max_output_tokens: 40,
    text: { format: { type: "json_schema", name: "answer", strict: true, schema: { type: "object",
      properties: { sunny: { type: "boolean" } }, required: ["sunny"], additionalProperties: false } } } });
  if (r.status === "completed") assert.equal(typeof JSON.parse(r.output_text).sunny, "boolean");
  else assert.ok(r.output_text.startsWith("{"), r.output_text);
});

test("fields not implemented are refused with 400 naming them", async () => {
  const cases = [
    [{ store: true }, "store"],
    [{ previous_response_id: "resp_1" }, "previous_response_id"],
    [{ tools: [{ type: "web_search" }] }, "tools[0].type"],
    [{ top_logprobs: 2 }, "top_logprobs"],
  ];
  for (const [extra, field] of cases) {
    const e = await apiError(client.responses.create({ model: "m", input: "hi", ...extra }));
    assert.equal(e.status, 400);
    assert.equal(e.param, field);
    assert.ok(e.message.includes(`\`${field}`), e.message);
  }
});
