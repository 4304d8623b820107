// `glmrt serve` under abuse: malformed, oversized and garbage requests; a full
// queue (429); clients that disconnect mid-answer (the generation stops);
// many concurrent clients (no crash, memory bounded); SIGTERM while a request
// runs and another waits (the running one finishes, the waiting one gets 503,
// the process exits 0).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { env, metric, metrics, startServer, waitFor } from "./glmrt_server.mjs";

let server;

before(async () => {
  server = await startServer([
    // One request at a time: the queue tests need one running, one waiting.
    "--parallel", "1",
    "--max-queue", "1",
    "--max-body-bytes", "65536",
    "--max-messages", "8",
    "--max-tokens", "2000",
    "--max-batch", "4",
  ]);
});

after(async () => {
  const { code, signal } = await server.stop();
  assert.equal(signal, null, "the server was killed");
  assert.equal(code, 0, "the server exits cleanly on SIGTERM");
});

const json = { "Content-Type": "application/json" };

async function post(path, body, init = {}) {
  return fetch(server.url + path, {
    method: "POST",
    headers: json,
    body: typeof body === "string" ? body : JSON.stringify(body),
    ...init,
  });
}

async function expectError(response, status, messagePart, param) {
  assert.equal(response.status, status);
  const body = await response.json();
  assert.equal(typeof body.error.message, "string");
  assert.ok(body.error.message.includes(messagePart), body.error.message);
  assert.equal(typeof body.error.type, "string");
  if (param !== undefined) assert.equal(body.error.param, param);
}

// A raw request on its own socket: the reply's status line, or "" when the
// server closes the connection (or stays silent for timeoutMs) without one.
function raw(bytes, timeoutMs = 10000) {
  return new Promise((resolve) => {
    const socket = net.connect(server.port, "127.0.0.1");
    let reply = "";
    const done = () => {
      socket.destroy();
      resolve(reply.includes("\r\n") ? reply.split("\r\n")[0] : "");
    };
    socket.setTimeout(timeoutMs, done);
    socket.on("data", (d) => {
      reply += d;
      if (reply.includes("\r\n")) done();
    });
    socket.on("close", done);
    socket.on("error", () => {});
    socket.write(bytes);
  });
}

const hi = [{ role: "user", content: "hi" }];
const longCompletion = (n) => ({ prompt: [1, 2, 3], max_tokens: n, temperature: 0, ignore_eos: true });

test("malformed bodies get 400 naming the problem", async () => {
  await expectError(await post("/v1/chat/completions", '{"messages": [}'), 400, "not valid JSON");
  await expectError(await post("/v1/chat/completions", '{"messages": '), 400, "parse error");
  await expectError(await post("/v1/chat/completions", "[1,2]"), 400, "JSON object");
  await expectError(await post("/v1/chat/completions", ""), 400, "not valid JSON");
  await expectError(await post("/v1/completions", '{"prompt": "\\ud800"}'), 400, "not valid JSON");
  await expectError(await post("/v1/chat/completions", "[".repeat(5000) + "]".repeat(5000)), 400, "deeper");
  await expectError(await post("/v1/chat/completions", { messages: "hi" }), 400, "messages", "messages");
  await expectError(await post("/v1/chat/completions", { messages: hi, max_tokens: "5" }), 400, "max_tokens", "max_tokens");
  await expectError(await post("/v1/chat/completions", { messages: hi, stop: [1] }), 400, "stop", "stop");
  await expectError(await post("/v1/chat/completions", { messages: Array(9).fill(hi[0]) }), 400, "--max-messages", "messages");
  await expectError(await post("/v1/completions", { prompt: [[1], [2], [3], [4], [5]] }), 400, "--max-batch", "prompt");
  await expectError(await post("/v1/completions", { prompt: [1], max_tokens: 2001 }), 400, "--max-tokens", "max_tokens");
  await expectError(await post("/tokenize", { content: 5 }), 400, "content", "content");
  await expectError(await post("/detokenize", { tokens: [1, -2] }), 400, "tokens[1]", "tokens");
  await expectError(await fetch(server.url + "/v1/nothing"), 404, "no route GET /v1/nothing");
  // `curl -d` sends a form Content-Type (as a plain form of any web page
  // does): refused, and the error says what to do.
  const form = await post("/v1/chat/completions", JSON.stringify({ messages: [{ role: "user", content: "x".repeat(9000) }] }),
                          { headers: { "Content-Type": "application/x-www-form-urlencoded" } });
  await expectError(form, 415, "Content-Type: application/json");
});

test("oversized, garbage and truncated requests: refused, and the server carries on", async () => {
  const big = JSON.stringify({ messages: [{ role: "user", content: "x".repeat(70000) }] });
  await expectError(await post("/v1/chat/completions", big), 413, "--max-body-bytes");
  // Raw requests at once: each holds an HTTP thread at most for httplib's
  // 5 s read timeout.
  const [announced, garbage, longHeader] = await Promise.all([
    // Announced too large: nothing near 100 MB is allocated; httplib drains
    // what arrives until its read timeout, then answers 413.
    raw("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
        "Content-Length: 100000000\r\n\r\n{"),
    raw("GARBAGE\r\n\r\n"),
    raw("GET / HTTP/1.1\r\n" + "X-Long: " + "a".repeat(20000) + "\r\n\r\n"),
    // A body shorter than announced: the read times out; no reply is needed.
    raw("POST /v1/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 500\r\n\r\n{\"prompt\"", 7000),
  ]);
  assert.match(announced, / 413 /);
  assert.match(garbage, / 400 /);
  assert.match(longHeader, /^$| 4\d\d /);
  assert.equal((await fetch(server.url + "/health")).status, 200);
});

// Reads a streamed response until `chunks` events arrived; returns the reader.
async function readEvents(response, chunks) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let text = "";
  while ((text.match(/\n\n/g) || []).length < chunks) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  return { reader, text };
}

test("a full queue answers 429; a client that leaves stops its generation", async () => {
  const before = metric(await metrics(server.url), "glmrt_generated_tokens_total");
  const abort = new AbortController();
  const running = await post("/v1/completions", { ...longCompletion(1500), stream: true }, { signal: abort.signal });
  assert.equal(running.status, 200);
  await readEvents(running, 2); // it runs
  const waiting = post("/v1/completions", longCompletion(5)); // takes the one queue place
  await waitFor(async () => metric(await metrics(server.url), "glmrt_queue_waiting") === 1, 10000, "a waiting request");
  const refused = await post("/v1/completions", longCompletion(5));
  assert.equal(refused.status, 429);
  const body = await refused.json();
  assert.equal(body.error.code, "queue_full");
  assert.equal(body.error.type, "rate_limit_error");

  abort.abort(); // the streaming client leaves
  const second = await waiting;
  assert.equal(second.status, 200);
  assert.equal((await second.json()).usage.completion_tokens, 5);
  const generated = metric(await metrics(server.url), "glmrt_generated_tokens_total") - before;
  assert.ok(generated < 1500, `the abandoned generation stopped early (${generated} tokens decoded)`);
});

test("a non-streaming client that disconnects stops its generation too", async () => {
  const before = metric(await metrics(server.url), "glmrt_generated_tokens_total");
  const abort = new AbortController();
  const request = post("/v1/completions", longCompletion(1500), { signal: abort.signal }).catch((e) => e);
  await waitFor(async () => metric(await metrics(server.url), "glmrt_queue_running") === 1, 10000, "the request to run");
  await new Promise((r) => setTimeout(r, 300));
  abort.abort();
  await request;
  await waitFor(async () => metric(await metrics(server.url), "glmrt_queue_running") === 0, 10000, "the generation to stop");
  const generated = metric(await metrics(server.url), "glmrt_generated_tokens_total") - before;
  assert.ok(generated < 1500, `stopped early (${generated} tokens decoded)`);
});

test("concurrent clients: every one answered 200 or 429, memory bounded", async () => {
  const rssBefore = metric(await metrics(server.url), "glmrt_resident_memory_bytes");
  const kinds = [
    () => post("/v1/chat/completions", { messages: hi, max_tokens: 8, stream: true }),
    () => post("/v1/chat/completions", { messages: hi, max_tokens: 8 }),
    () => post("/v1/completions", { prompt: [[1, 2, 3], [4, 5]], echo: true, logprobs: 1, max_tokens: 2 }),
    () => post("/v1/completions", { prompt: "hello", max_tokens: 8, stream: true }),
  ];
  const statuses = {};
  const started = Date.now();
  for (let round = 0; round < 2; round++) {
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        kinds[i % kinds.length]().then(async (r) => {
          const text = await r.text();
          if (r.status === 200 && r.headers.get("content-type").startsWith("text/event-stream"))
            assert.ok(text.endsWith("data: [DONE]\n\n"), "a complete stream");
          else JSON.parse(text);
          return r.status;
        }),
      ),
    );
    for (const s of responses) statuses[s] = (statuses[s] || 0) + 1;
  }
  assert.ok(Date.now() - started < 120000, "answered within two minutes");
  assert.deepEqual(Object.keys(statuses).filter((s) => s !== "200" && s !== "429"), [], JSON.stringify(statuses));
  assert.ok(statuses[200] > 0, JSON.stringify(statuses));
  const rssAfter = metric(await metrics(server.url), "glmrt_resident_memory_bytes");
  const growthMb = (rssAfter - rssBefore) / 2 ** 20;
  assert.ok(growthMb < env.rssGrowthLimitMb, `RSS grew ${growthMb.toFixed(1)} MiB`);
  assert.equal((await fetch(server.url + "/health")).status, 200);
});

test("SIGTERM: the running request finishes, the waiting one gets 503, exit 0", async () => {
  const other = await startServer(["--parallel", "1", "--max-queue", "2", "--shutdown-grace", "60"]);
  const running = await fetch(other.url + "/v1/completions", {
    method: "POST",
    headers: json,
    body: JSON.stringify({ ...longCompletion(1500), stream: true }),
  });
  const { reader, text: start } = await readEvents(running, 1);
  const waiting = fetch(other.url + "/v1/completions", {
    method: "POST",
    headers: json,
    body: JSON.stringify(longCompletion(5)),
  });
  await waitFor(async () => metric(await metrics(other.url), "glmrt_queue_waiting") === 1, 10000, "a waiting request");
  other.signal("SIGTERM");
  const refused = await waiting;
  assert.equal(refused.status, 503);
  // While the running request finishes, the server still answers: /health says it is stopping.
  // (On a connection of its own: responses during the shutdown close theirs.)
  const health = await new Promise((resolve) => {
    const socket = net.connect(other.port, "127.0.0.1");
    let text = "";
    socket.on("data", (d) => { text += d; });
    socket.on("close", () => resolve(text));
    socket.on("error", () => resolve(text));
    socket.write("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  });
  // Never a 200 once stopping: /health's {"status":"shutting down"}, or, once
  // the server no longer takes requests, the 503 error every new connection
  // then gets ("the server is shutting down"). (No answer at all when the
  // running request's events all fit in the socket buffers and the server
  // already stopped listening: the window is the time the model still works.)
  if (health) {
    assert.match(health, /^HTTP\/1\.1 503 /, health);
    assert.match(health, /"(status":"shutting down|message":"the server is shutting down)"/, health);
  }
  // The stream runs to its end.
  let text = start;
  const decoder = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  assert.ok(text.endsWith("data: [DONE]\n\n"), "the running request finished");
  assert.match(text, /"finish_reason":"length"/);
  const { code, signal } = await other.stop();
  assert.equal(signal, null);
  assert.equal(code, 0);
  await assert.rejects(fetch(other.url + "/health"), "nothing listens any more");
});

test("SIGTERM with no grace: the running request is cancelled with a 503, exit 0", async () => {
  const other = await startServer(["--shutdown-grace", "0"]);
  const running = fetch(other.url + "/v1/completions", {
    method: "POST",
    headers: json,
    body: JSON.stringify(longCompletion(4000)),
  });
  await waitFor(async () => metric(await metrics(other.url), "glmrt_queue_running") === 1, 10000, "the request to run");
  other.signal("SIGTERM");
  const response = await running;
  await expectError(response, 503, "cancelled");
  const { code, signal } = await other.stop();
  assert.equal(signal, null);
  assert.equal(code, 0);
});
