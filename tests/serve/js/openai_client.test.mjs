// The official `openai` npm client against `glmrt serve` on the tiny fixture
// (random weights: the text is noise, the shapes and numbers are checked):
// chat streamed and not, logprobs, stop strings, thinking on and off, tools;
// completions with echo + logprobs for single and batched id prompts (the
// lm-evaluation-harness request); models, tokenize; errors as APIErrors that
// name the field; the API key and CORS.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { startServer } from "./glmrt_server.mjs";

const KEY = "test-key";
const ORIGIN = "http://page.example";
let server;
let client;

before(async () => {
  server = await startServer(["--api-key", KEY, "--cors", ORIGIN, "--max-tokens", "256"]);
  client = new OpenAI({ baseURL: server.url + "/v1", apiKey: KEY, maxRetries: 0, timeout: 120000 });
});

after(async () => {
  const { code, signal } = await server.stop();
  assert.equal(signal, null, "the server was killed");
  assert.equal(code, 0, "the server exits cleanly on SIGTERM");
});

const hello = [{ role: "user", content: "Hello, who are you?" }];

async function apiError(promise) {
  try {
    await promise;
  } catch (e) {
    assert.ok(e instanceof OpenAI.APIError, `expected an APIError, got ${e}`);
    return e;
  }
  assert.fail("the request succeeded");
}

async function detokenize(tokens) {
  const r = await fetch(server.url + "/detokenize", {
    method: "POST",
    headers: { Authorization: `Bearer ${KEY}`, "Content-Type": "application/json" },
    body: JSON.stringify({ tokens }),
  });
  return (await r.json()).content;
}

test("models list the served model", async () => {
  const page = await client.models.list();
  assert.equal(page.data.length, 1);
  assert.equal(page.data[0].id, "glm_tiny");
  const model = await client.models.retrieve("glm_tiny");
  assert.equal(model.id, "glm_tiny");
  // When the server started, in unix seconds.
  assert.ok(Math.abs(model.created - Date.now() / 1000) < 3600, `created ${model.created}`);
});

test("two conversations taking turns both keep their cached prefix (--slots)", async () => {
  const ask = (content) =>
    client.chat.completions.create({ model: "m", messages: [{ role: "user", content }], max_tokens: 4, seed: 1 });
  const a = "Conversation A: tell me about the weather in the northern mountains today, please.";
  const b = "Conversation B: a completely different question about cooking rice and beans.";
  const first = await ask(a);
  await ask(b);
  const again = await ask(a);
  const prompt = first.usage.prompt_tokens;
  assert.equal(again.usage.prompt_tokens, prompt);
  // All of A's prompt but its last token (whose logits are computed again).
  assert.ok(again.usage.prompt_tokens_details.cached_tokens >= prompt - 1,
            `cached ${again.usage.prompt_tokens_details.cached_tokens} of ${prompt}`);
});

test("n choices: indexed, seeded one after another, the first as n = 1 answers", async () => {
  const ask = (n, stream = false) =>
    client.chat.completions.create({ model: "m", messages: hello, max_tokens: 6, seed: 11, n, stream, temperature: 1 });
  const one = await ask(1);
  const three = await ask(3);
  assert.deepEqual(three.choices.map((c) => c.index), [0, 1, 2]);
  assert.equal(three.choices[0].message.content, one.choices[0].message.content);
  assert.equal(three.usage.prompt_tokens, one.usage.prompt_tokens);
  assert.ok(three.usage.completion_tokens > one.usage.completion_tokens, "every choice counted");
  assert.ok(new Set(three.choices.map((c) => c.message.reasoning_content + c.message.content)).size > 1,
            "other seeds, other answers");
  const streamed = { 0: "", 1: "", 2: "" };
  const finished = new Set();
  for await (const chunk of await ask(3, true))
    for (const c of chunk.choices) {
      streamed[c.index] += (c.delta.reasoning_content || "") + (c.delta.content || "");
      if (c.finish_reason) finished.add(c.index);
    }
  assert.deepEqual([...finished].sort(), [0, 1, 2]);
  for (const c of three.choices)
    assert.equal(streamed[c.index], (c.message.reasoning_content || "") + (c.message.content || ""));
  const completions = await client.completions.create({ model: "m", prompt: [[5, 6], [7, 8]], max_tokens: 2, n: 2, seed: 3 });
  assert.deepEqual(completions.choices.map((c) => c.index), [0, 1, 2, 3]);
});

test("logit_bias: a banned token is never chosen", async () => {
  const first = async (logit_bias) =>
    (await client.completions.create({ model: "m", prompt: [5, 6, 7], max_tokens: 1, temperature: 0, logit_bias })).choices[0].text;
  const greedy = await first(undefined);
  const r = await fetch(server.url + "/tokenize", {
    method: "POST", headers: { "Content-Type": "application/json", Authorization: `Bearer ${KEY}` },
    body: JSON.stringify({ content: greedy }),
  });
  const tokenized = await r.text();
  assert.equal(r.status, 200, tokenized);
  const banned = Object.fromEntries(JSON.parse(tokenized).tokens.map((t) => [String(t), -100]));
  const other = await first(banned);
  assert.notEqual(other, greedy, `banning ${JSON.stringify(banned)}`);
});

test("/metrics: time to first token and inter-token latency histograms", async () => {
  await client.chat.completions.create({ model: "m", messages: hello, max_tokens: 5 });
  const text = await (await fetch(server.url + "/metrics", { headers: { Authorization: `Bearer ${KEY}` } })).text();
  const value = (name) => Number((text.match(new RegExp(`^${name} (\\S+)$`, "m")) || [])[1]);
  assert.match(text, /# TYPE glmrt_time_to_first_token_seconds histogram/);
  assert.ok(value("glmrt_time_to_first_token_seconds_count") >= 1, text);
  assert.ok(value("glmrt_inter_token_latency_seconds_count") >= 4);
  assert.equal(value('glmrt_time_to_first_token_seconds_bucket\\{le="\\+Inf"\\}'),
               value("glmrt_time_to_first_token_seconds_count"));
  assert.ok(value("glmrt_last_request_generated_tokens") >= 1);
  assert.ok(value("glmrt_peak_resident_memory_bytes") >= value("glmrt_resident_memory_bytes") * 0.99);
});

test("a media part is refused, not read as text", async () => {
  const e = await apiError(client.chat.completions.create({
    model: "m",
    messages: [{ role: "user", content: [{ type: "text", text: "what is this?" }, { type: "image_url", image_url: { url: "data:," } }] }],
  }));
  assert.equal(e.status, 400);
  assert.equal(e.param, "messages[0].content[1]");
  assert.match(e.message, /image_url/);
});

test("chat, not streamed: message, reasoning, usage, documented no-op fields accepted", async () => {
  const r = await client.chat.completions.create({
    model: "gpt-4o", // any name is accepted
    messages: hello,
    max_tokens: 12,
    temperature: 0,
    user: "someone",
    metadata: { purpose: "test" },
    stream_options: null,
  });
  assert.equal(r.object, "chat.completion");
  assert.match(r.id, /^chatcmpl-/);
  assert.equal(r.model, "glm_tiny");
  assert.equal(r.choices.length, 1);
  const choice = r.choices[0];
  assert.equal(choice.message.role, "assistant");
  assert.equal(typeof choice.message.content, "string");
  assert.equal(typeof choice.message.reasoning_content, "string"); // thinking is on by default
  assert.ok(["stop", "length"].includes(choice.finish_reason));
  assert.ok(r.usage.prompt_tokens > 0);
  assert.ok(r.usage.completion_tokens > 0 && r.usage.completion_tokens <= 12);
  assert.equal(r.usage.total_tokens, r.usage.prompt_tokens + r.usage.completion_tokens);
  assert.ok((choice.message.content + choice.message.reasoning_content).length > 0);
});

test("chat, streamed: role first, deltas, finish reason, usage chunk, same text as unstreamed", async () => {
  const request = { model: "m", messages: hello, max_tokens: 12, temperature: 0 };
  const whole = await client.chat.completions.create(request);
  const stream = await client.chat.completions.create({
    ...request,
    stream: true,
    stream_options: { include_usage: true },
  });
  let first = true;
  let reasoning = "";
  let content = "";
  let finish = null;
  let usage = null;
  let chunks = 0;
  for await (const chunk of stream) {
    assert.equal(chunk.object, "chat.completion.chunk");
    chunks++;
    if (chunk.usage) usage = chunk.usage;
    if (chunk.choices.length === 0) continue;
    const c = chunk.choices[0];
    if (first) assert.equal(c.delta.role, "assistant");
    first = false;
    reasoning += c.delta.reasoning_content ?? "";
    content += c.delta.content ?? "";
    if (c.finish_reason) finish = c.finish_reason;
  }
  assert.ok(chunks >= 3, "the answer arrives in several chunks");
  assert.equal(finish, whole.choices[0].finish_reason);
  assert.equal(reasoning, whole.choices[0].message.reasoning_content);
  assert.equal(content, whole.choices[0].message.content);
  assert.deepEqual(
    { p: usage.prompt_tokens, c: usage.completion_tokens },
    { p: whole.usage.prompt_tokens, c: whole.usage.completion_tokens },
  );
  // The same conversation again: its prompt is in the KV cache.
  assert.ok(usage.prompt_tokens_details.cached_tokens > 0);
});

test("chat with thinking off: everything is content", async () => {
  const r = await client.chat.completions.create({
    model: "m",
    messages: hello,
    max_tokens: 8,
    temperature: 0,
    chat_template_kwargs: { enable_thinking: false },
  });
  assert.equal(r.choices[0].message.reasoning_content, undefined);
  assert.ok(r.choices[0].message.content.length > 0);
});

test("chat logprobs: one entry per token with the asked alternatives", async () => {
  const r = await client.chat.completions.create({
    model: "m",
    messages: hello,
    max_tokens: 6,
    temperature: 0,
    logprobs: true,
    top_logprobs: 3,
    ignore_eos: true,
  });
  const entries = r.choices[0].logprobs.content;
  assert.equal(entries.length, r.usage.completion_tokens);
  for (const e of entries) {
    assert.ok(e.logprob <= 0);
    assert.equal(e.top_logprobs.length, 3);
    // Greedy: the chosen token is the most probable one.
    assert.equal(e.logprob, e.top_logprobs[0].logprob);
    assert.deepEqual(e.bytes, [...Buffer.from(e.token)]);
  }
});

test("seeded sampling repeats; other seeds differ", async () => {
  const ask = (seed) =>
    client.chat.completions.create({
      model: "m",
      messages: hello,
      max_tokens: 16,
      temperature: 1,
      seed,
      ignore_eos: true,
      frequency_penalty: 0.5,
      presence_penalty: 0.5,
      top_p: 0.95,
      top_k: 50,
      min_p: 0.01,
    });
  const text = (r) => r.choices[0].message.reasoning_content + "|" + r.choices[0].message.content;
  const a = await ask(7);
  const b = await ask(7);
  assert.equal(text(a), text(b));
  const others = await Promise.all([ask(8), ask(9)]);
  assert.ok(others.some((r) => text(r) !== text(a)), "different seeds give different text");
});

test("stop strings end the text before them, across token boundaries", async () => {
  const base = { model: "m", prompt: "The quick brown fox", max_tokens: 24, temperature: 0, ignore_eos: true };
  const full = (await client.completions.create(base)).choices[0].text;
  assert.ok(full.length > 8, `a long enough greedy text: ${JSON.stringify(full)}`);
  const stop = full.slice(5, 8);
  const r = await client.completions.create({ ...base, stop: [stop, "never-appears"] });
  assert.equal(r.choices[0].text, full.slice(0, full.indexOf(stop)));
  assert.equal(r.choices[0].finish_reason, "stop");
});

test("completions with echo + logprobs on an id prompt (legacy format)", async () => {
  const prompt = [10, 20, 30, 40, 50];
  const r = await client.completions.create({
    model: "m",
    prompt,
    echo: true,
    logprobs: 2,
    max_tokens: 3,
    temperature: 0,
    ignore_eos: true,
  });
  assert.equal(r.object, "text_completion");
  const c = r.choices[0];
  const lp = c.logprobs;
  assert.equal(lp.tokens.length, prompt.length + 3);
  assert.equal(lp.token_logprobs[0], null);
  assert.equal(lp.top_logprobs[0], null);
  for (let i = 1; i < lp.tokens.length; i++) {
    assert.ok(lp.token_logprobs[i] <= 0);
    assert.ok(Object.keys(lp.top_logprobs[i]).length >= 1);
    assert.ok(lp.text_offset[i] >= lp.text_offset[i - 1]);
  }
  assert.ok(c.text.startsWith(await detokenize(prompt)));
  assert.equal(r.usage.prompt_tokens, prompt.length);
  assert.equal(r.usage.completion_tokens, 3);
});

test("completions, batched id prompts scored only (max_tokens 0), as lm-evaluation-harness sends", async () => {
  const prompts = [
    [1, 2, 3, 4, 5, 6],
    [1, 2, 3, 4, 9],
    [7, 8],
  ];
  const r = await client.completions.create({
    model: "m",
    prompt: prompts,
    echo: true,
    logprobs: 1,
    max_tokens: 0,
    temperature: 0,
    seed: 1234,
  });
  assert.equal(r.choices.length, prompts.length);
  r.choices.forEach((c, i) => {
    assert.equal(c.index, i);
    assert.equal(c.finish_reason, "length");
    assert.equal(c.logprobs.tokens.length, prompts[i].length);
    assert.equal(c.logprobs.token_logprobs[0], null);
  });
  // Shared prefixes score the same whatever was cached.
  const single = await client.completions.create({
    model: "m",
    prompt: prompts[1],
    echo: true,
    logprobs: 1,
    max_tokens: 0,
  });
  single.choices[0].logprobs.token_logprobs.slice(1).forEach((v, i) => {
    assert.ok(Math.abs(v - r.choices[1].logprobs.token_logprobs[i + 1]) < 1e-4);
  });
  // lm-evaluation-harness: max_tokens 1, sums token_logprobs[ctxlen:-1].
  const harness = await client.completions.create({
    model: "m",
    prompt: prompts,
    echo: true,
    logprobs: 1,
    max_tokens: 1,
    temperature: 0,
    seed: 1234,
  });
  harness.choices.forEach((c, i) => {
    assert.equal(c.logprobs.token_logprobs.length, prompts[i].length + 1);
    const ctxlen = 1;
    const sum = c.logprobs.token_logprobs.slice(ctxlen, -1).reduce((a, b) => a + b, 0);
    const expected = r.choices[i].logprobs.token_logprobs.slice(ctxlen).reduce((a, b) => a + b, 0);
    assert.ok(Math.abs(sum - expected) < 1e-4);
  });
});

test("completions, streamed with text prompts in a batch", async () => {
  const stream = await client.completions.create({
    model: "m",
    prompt: ["Once upon", "a time"],
    max_tokens: 5,
    temperature: 0,
    stream: true,
    ignore_eos: true,
    stream_options: { include_usage: true },
  });
  const text = ["", ""];
  const finish = [null, null];
  let usage = null;
  for await (const chunk of stream) {
    if (chunk.usage) usage = chunk.usage;
    for (const c of chunk.choices) {
      text[c.index] += c.text;
      if (c.finish_reason) finish[c.index] = c.finish_reason;
    }
  }
  assert.deepEqual(finish, ["length", "length"]);
  assert.ok(text[0].length > 0 && text[1].length > 0);
  assert.equal(usage.completion_tokens, 10);
});

test("tools are rendered and the answer comes back in the chat shape", async () => {
  const r = await client.chat.completions.create({
    model: "m",
    messages: [
      { role: "system", content: "Use tools." },
      { role: "user", content: "Weather in Paris?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Paris"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "sunny" },
    ],
    tools: [
      {
        type: "function",
        function: {
          name: "get_weather",
          description: "weather of a city",
          parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
        },
      },
    ],
    tool_choice: "auto",
    parallel_tool_calls: false,
    max_tokens: 8,
  });
  assert.ok(["stop", "length", "tool_calls"].includes(r.choices[0].finish_reason));
});

test("tool_choice required or a named function: the answer is a call", async () => {
  const tools = [
    { type: "function", function: { name: "get_weather", parameters: { type: "object", properties: { city: { type: "string" } } } } },
    { type: "function", function: { name: "get_time", parameters: { type: "object", properties: {} } } },
  ];
  for (const tool_choice of ["required", { type: "function", function: { name: "get_time" } }]) {
    const r = await client.chat.completions.create({
      model: "m", messages: [{ role: "user", content: "What time is it?" }], tools, tool_choice, max_tokens: 8,
    });
    const choice = r.choices[0];
    // Cut by max_tokens (the tiny model rarely closes a call): "length", still the call.
    assert.equal(choice.finish_reason, r.usage.completion_tokens === 8 ? "length" : "tool_calls",
      JSON.stringify(choice));
    assert.equal(choice.message.tool_calls.length >= 1, true);
    const call = choice.message.tool_calls[0];
    assert.ok(["get_weather", "get_time"].includes(call.function.name), call.function.name);
    if (typeof tool_choice === "object") assert.equal(call.function.name, "get_time");
    assert.equal(typeof JSON.parse(call.function.arguments), "object");
    assert.ok(!(choice.message.content || "").includes("<tool_call>"));
  }
});

test("errors are APIErrors naming the field", async () => {
  const cases = [
    [{ n: 9 }, "n"],
    [{ logit_bias: { "999999": 1 } }, "logit_bias"],
    [{ response_format: { type: "json_schema", json_schema: { name: "x", schema: { type: "string", pattern: "a" } } } }, "response_format"],
    [{ temperature: 3 }, "temperature"],
    [{ max_tokens: 100000 }, "max_tokens"],
    [{ top_logprobs: 2 }, "top_logprobs"],
    [{ tool_choice: "required", tools: [] }, "tool_choice"],
    [{ messages: [] }, "messages"],
    [{ messages: [{ role: "wizard", content: "hi" }] }, "messages[0].role"],
    [{ seed: -1 }, "seed"],
    [{ best_of: 2 }, "best_of"],
    [{ n_predict: 4 }, "n_predict"],
    [{ reasoning_effort: {} }, "reasoning_effort"],
  ];
  for (const [fields, param] of cases) {
    const e = await apiError(client.chat.completions.create({ model: "m", messages: hello, ...fields }));
    assert.equal(e.status, 400, JSON.stringify(fields));
    assert.equal(e.param, param, JSON.stringify(fields));
    assert.equal(e.type, "invalid_request_error");
    assert.ok(e.message.includes(param.split(".")[0]), e.message);
  }
  const ids = await apiError(client.completions.create({ model: "m", prompt: [5, 99999] }));
  assert.equal(ids.status, 400);
  assert.equal(ids.param, "prompt");
  const long = await apiError(client.completions.create({ model: "m", prompt: Array(5000).fill(5) }));
  assert.equal(long.code, "context_length_exceeded");
  const missing = await apiError(client.models.retrieve("other-model"));
  assert.equal(missing.status, 404);
});

test("the API key is required; the chat page and /health are public", async () => {
  const wrong = new OpenAI({ baseURL: server.url + "/v1", apiKey: "wrong", maxRetries: 0 });
  const e = await apiError(wrong.chat.completions.create({ model: "m", messages: hello }));
  assert.ok(e instanceof OpenAI.AuthenticationError);
  assert.equal(e.status, 401);
  assert.equal((await fetch(server.url + "/v1/models")).status, 401);
  assert.equal((await fetch(server.url + "/metrics")).status, 401);
  assert.equal((await fetch(server.url + "/health")).status, 200);
  assert.equal((await fetch(server.url + "/")).status, 200);
  assert.equal((await fetch(server.url + "/page/chat_page.js")).status, 200, "the page's files are public too");
});

test("CORS: preflight answered for the allowed origin, header on responses", async () => {
  const preflight = await fetch(server.url + "/v1/chat/completions", {
    method: "OPTIONS",
    headers: { Origin: ORIGIN, "Access-Control-Request-Method": "POST" },
  });
  assert.equal(preflight.status, 204);
  assert.equal(preflight.headers.get("access-control-allow-origin"), ORIGIN);
  assert.match(preflight.headers.get("access-control-allow-headers"), /Authorization/);
  const health = await fetch(server.url + "/health", { headers: { Origin: ORIGIN } });
  assert.equal(health.headers.get("access-control-allow-origin"), ORIGIN);
});

test("tokenize and detokenize round-trip", async () => {
  const headers = { Authorization: `Bearer ${KEY}`, "Content-Type": "application/json" };
  const t = await fetch(server.url + "/tokenize", {
    method: "POST",
    headers,
    body: JSON.stringify({ content: "hello world" }),
  }).then((r) => r.json());
  assert.ok(t.tokens.length > 0);
  assert.equal(t.count, t.tokens.length);
  assert.equal(await detokenize(t.tokens), "hello world");
  const chat = await fetch(server.url + "/tokenize", {
    method: "POST",
    headers,
    body: JSON.stringify({ messages: hello }),
  }).then((r) => r.json());
  const r = await client.chat.completions.create({ model: "m", messages: hello, max_tokens: 1 });
  assert.equal(chat.count, r.usage.prompt_tokens);
});
