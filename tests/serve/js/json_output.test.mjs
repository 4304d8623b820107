// response_format through the official `openai` client: json_object and
// json_schema answers (chat and completions, streamed and not) parse and
// satisfy their schema, max_tokens cuts with finish_reason "length", an
// unsupported keyword is a 400 naming it; and on the bundled demo model, of
// 20 answers sampled at temperature 1 (max_tokens 400) at least 18 finish
// with "stop", every one of them valid.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import OpenAI from "openai";
import { demo, startServer } from "./glmrt_server.mjs";

let tiny, tinyClient;

before(async () => {
  tiny = await startServer(["--max-tokens", "400"]);
  tinyClient = new OpenAI({ baseURL: tiny.url + "/v1", apiKey: "none", maxRetries: 0, timeout: 120000 });
});

after(async () => {
  const { code } = await tiny.stop();
  assert.equal(code, 0);
});

// What of the supported subset `value` breaks (an empty list when valid).
function violations(schema, value, path = "$") {
  const out = [];
  const typeOf = (v) =>
    v === null ? "null" : Array.isArray(v) ? "array" : Number.isInteger(v) ? "integer" : typeof v;
  if (schema.enum && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value)))
    out.push(`${path}: not in enum`);
  const types = schema.type === undefined ? null : [].concat(schema.type);
  const t = typeOf(value);
  if (types && !types.includes(t) && !(t === "integer" && types.includes("number")))
    out.push(`${path}: ${t} is not ${types}`);
  if (typeof value === "string") {
    const n = [...value].length;
    if (schema.maxLength !== undefined && n > schema.maxLength) out.push(`${path}: longer than maxLength`);
    if (schema.minLength !== undefined && n < schema.minLength) out.push(`${path}: shorter than minLength`);
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum) out.push(`${path}: below minimum`);
    if (schema.maximum !== undefined && value > schema.maximum) out.push(`${path}: above maximum`);
  }
  if (Array.isArray(value)) {
    if (schema.maxItems !== undefined && value.length > schema.maxItems) out.push(`${path}: too many items`);
    if (schema.minItems !== undefined && value.length < schema.minItems) out.push(`${path}: too few items`);
    if (schema.items) value.forEach((v, i) => out.push(...violations(schema.items, v, `${path}[${i}]`)));
  }
  if (t === "object") {
    for (const key of schema.required ?? []) if (!(key in value)) out.push(`${path}: lacks ${key}`);
    for (const [key, v] of Object.entries(value)) {
      const sub = schema.properties?.[key];
      if (sub) out.push(...violations(sub, v, `${path}.${key}`));
      else if (schema.additionalProperties === false) out.push(`${path}: extra key ${key}`);
    }
  }
  return out;
}

const customer = {
  type: "object",
  properties: {
    name: { type: "string", maxLength: 24 },
    city: { type: "string", maxLength: 16 },
    age: { type: "integer", minimum: 18, maximum: 99 },
    rating: { type: "number", minimum: 0, maximum: 5 },
    member: { type: "boolean" },
    tags: { type: "array", items: { enum: ["new", "vip", "late"] }, maxItems: 2 },
  },
  required: ["name", "city", "age", "rating", "member", "tags"],
  additionalProperties: false,
};
const asCustomer = { type: "json_schema", json_schema: { name: "customer", strict: true, schema: customer } };
const ask = [{ role: "user", content: "Describe a customer as JSON." }];

function assertValid(text, schema) {
  let value;
  assert.doesNotThrow(() => (value = JSON.parse(text)), `not JSON: ${text}`);
  assert.deepEqual(violations(schema, value), [], text);
  return value;
}

test("json_schema: chat answers parse and satisfy the schema, streamed as not", async () => {
  for (const seed of [1, 2]) {
    const r = await tinyClient.chat.completions.create({
      model: "m", messages: ask, max_tokens: 400, temperature: 1, seed, response_format: asCustomer,
    });
    const choice = r.choices[0];
    assert.equal(choice.finish_reason, "stop", JSON.stringify(choice));
    assertValid(choice.message.content, customer);
    assert.equal(choice.message.reasoning_content, "");  // thinking closed before the JSON
    const stream = await tinyClient.chat.completions.create({
      model: "m", messages: ask, max_tokens: 400, temperature: 1, seed, response_format: asCustomer, stream: true,
    });
    let content = "", finish = null;
    for await (const chunk of stream)
      for (const c of chunk.choices) {
        content += c.delta.content ?? "";
        finish = c.finish_reason ?? finish;
      }
    assert.equal(content, choice.message.content);
    assert.equal(finish, "stop");
  }
});

test("json_object: any JSON object, n choices each constrained", async () => {
  const r = await tinyClient.chat.completions.create({
    model: "m", messages: ask, max_tokens: 120, seed: 5, n: 2, response_format: { type: "json_object" },
  });
  assert.equal(r.choices.length, 2);
  for (const choice of r.choices) {
    if (choice.finish_reason === "stop") {
      const value = JSON.parse(choice.message.content);
      assert.equal(typeof value, "object");
      assert.ok(!Array.isArray(value) && value !== null);
    } else {
      assert.equal(choice.finish_reason, "length");
      assert.ok(choice.message.content.startsWith("{"), choice.message.content);
    }
  }
});

test("completions: the text is the JSON, streamed too", async () => {
  const r = await tinyClient.completions.create({
    model: "m", prompt: "A customer:", max_tokens: 400, seed: 3, response_format: asCustomer,
  });
  assert.equal(r.choices[0].finish_reason, "stop");
  assertValid(r.choices[0].text, customer);
  const stream = await tinyClient.completions.create({
    model: "m", prompt: "A customer:", max_tokens: 400, seed: 3, response_format: asCustomer, stream: true,
  });
  let text = "";
  for await (const chunk of stream) for (const c of chunk.choices) text += c.text;
  assert.equal(text, r.choices[0].text);
});

test("max_tokens before the JSON closes: finish_reason length", async () => {
  const r = await tinyClient.chat.completions.create({
    model: "m", messages: ask, max_tokens: 3, seed: 1, response_format: asCustomer,
  });
  assert.equal(r.choices[0].finish_reason, "length");
  assert.equal(r.usage.completion_tokens, 3);
  assert.throws(() => JSON.parse(r.choices[0].message.content));
});

test("an unsupported schema keyword is a 400 naming it and where it is", async () => {
  const cases = [
    [{ type: "object", properties: { when: { type: "string", pattern: "^[0-9]+$" } } }, "`pattern` at `properties.when`"],
    [{ type: "object", properties: { a: { $ref: "#/$defs/a" } } }, "at `properties.a` names nothing"],
    [{ anyOf: [{ type: "object" }, { type: "object" }] }, "`anyOf` at the schema"],
    [{ type: "string", format: "hostname" }, "`format` \"hostname\" at the schema"],
    [{ type: "string", minimum: 1 }, "`minimum`"],
  ];
  for (const [schema, named] of cases) {
    let error;
    try {
      await tinyClient.chat.completions.create({
        model: "m", messages: ask, response_format: { type: "json_schema", json_schema: { name: "x", schema } },
      });
    } catch (e) {
      error = e;
    }
    assert.ok(error instanceof OpenAI.APIError, String(error));
    assert.equal(error.status, 400);
    assert.equal(error.param, "response_format");
    assert.ok(error.message.includes(named), error.message);
  }
});

test("demo model: of 20 answers at temperature 1, at least 18 stop, every one valid", async () => {
  const server = await startServer([], demo);
  try {
    const client = new OpenAI({ baseURL: server.url + "/v1", apiKey: "none", maxRetries: 0, timeout: 120000 });
    let stopped = 0, tokens = 0;
    const started = Date.now();
    for (let seed = 1; seed <= 20; ++seed) {
      const r = await client.chat.completions.create({
        model: "m", messages: ask, max_tokens: 400, temperature: 1, seed, response_format: asCustomer,
      });
      tokens += r.usage.completion_tokens;
      if (r.choices[0].finish_reason !== "stop") continue;
      ++stopped;
      assertValid(r.choices[0].message.content, customer);
    }
    console.log(`demo model, json_schema: ${stopped} of 20 stopped, ${tokens} tokens in ${Date.now() - started} ms`);
    assert.ok(stopped >= 18, `${stopped} of 20 stopped`);
  } finally {
    await server.stop();
  }
});
