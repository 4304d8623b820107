// `glmrt serve` against hostile clients, on raw sockets: chunked uploads past
// --max-body-bytes, slow and idle connections, ambiguous framing, pipelined
// requests, many large bodies at once. The limits must hold and /health must
// keep answering.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { env, metric, metrics, startServer, waitFor } from "./glmrt_server.mjs";

let server;

before(async () => {
  server = await startServer([
    "--max-body-bytes", "65536",
    "--max-body-memory", "131072",
    "--request-timeout", "3",
    "--idle-timeout", "2",
    "--max-connections", "100",
  ]);
});

after(async () => {
  const { code, signal } = await server.stop();
  assert.equal(signal, null, "the server was killed");
  assert.equal(code, 0, "the server exits cleanly on SIGTERM");
});

// A connection that collects everything the server sends until it closes
// (or timeoutMs): { text, closed }.
function connect() {
  const socket = net.connect(server.port, "127.0.0.1");
  let text = "";
  let closed = false;
  const ended = new Promise((resolve) => socket.on("close", () => { closed = true; resolve(); }));
  socket.on("data", (d) => { text += d; });
  socket.on("error", () => {});
  return {
    socket,
    write: (bytes) => new Promise((resolve) => socket.write(bytes, () => resolve())),
    text: () => text,
    closed: () => closed,
    ended,
    async until(predicate, timeoutMs, what) {
      await waitFor(() => predicate(text) || closed, timeoutMs, what);
      return text;
    },
  };
}

// Sends `bytes` on a fresh connection; resolves with everything answered once
// the server closes the connection (or after timeoutMs) and how long it took.
async function exchange(bytes, timeoutMs = 8000) {
  const started = Date.now();
  const c = connect();
  await c.write(bytes);
  await Promise.race([c.ended, new Promise((r) => setTimeout(r, timeoutMs))]);
  c.socket.destroy();
  return { text: c.text(), ms: Date.now() - started };
}

const statusOf = (text) => (text.match(/^HTTP\/1\.1 (\d{3})/) || [])[1];

async function healthMs() {
  const started = Date.now();
  const r = await fetch(server.url + "/health", { signal: AbortSignal.timeout(5000) });
  assert.equal(r.status, 200);
  return Date.now() - started;
}

test("a chunked body past --max-body-bytes: 413 before the connection closes, memory flat", async () => {
  const rssBefore = metric(await metrics(server.url), "glmrt_resident_memory_bytes");
  const c = connect();
  await c.write("POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
                "Transfer-Encoding: chunked\r\n\r\n");
  const chunk = (1 << 20).toString(16) + "\r\n" + "x".repeat(1 << 20) + "\r\n";
  let sent = 0;
  while (sent < 20 && !c.closed() && !c.text()) {
    c.socket.write(chunk);
    sent++;
    await new Promise((r) => setTimeout(r, 5));
  }
  await c.until((t) => t.includes("\r\n\r\n"), 5000, "the 413");
  assert.equal(statusOf(c.text()), "413", c.text());
  assert.match(c.text(), /--max-body-bytes/);
  c.socket.destroy();
  const rssAfter = metric(await metrics(server.url), "glmrt_resident_memory_bytes");
  const growthMb = (rssAfter - rssBefore) / 2 ** 20;
  // The target is < 16 MB; a sanitizer build's quarantine keeps freed memory resident.
  const limitMb = env.rssGrowthLimitMb > 64 ? env.rssGrowthLimitMb : 16;
  assert.ok(growthMb < limitMb, `RSS grew ${growthMb.toFixed(1)} MiB`);
  const m = await metrics(server.url);
  assert.ok(metric(m, "glmrt_http_body_bytes_peak") <= 131072, m);
});

test("ambiguous or malformed framing: 400 at once", async () => {
  const head = "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n";
  const cases = [
    head + "Content-Length: 5\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
    head + "Transfer-Encoding: xchunked\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
    head + "Transfer-Encoding: chunked\r\nContent-Length: 7\r\n\r\n{\"a\":1}",
    head + "Content-Length: -1\r\n\r\n",
    head + "Transfer-Encoding: chunked\r\n\r\nzz\r\n",
  ];
  const answers = await Promise.all(cases.map((bytes) => exchange(bytes)));
  for (const [i, { text, ms }] of answers.entries()) {
    assert.equal(statusOf(text), "400", `case ${i}: ${text}`);
    assert.ok(ms < 2500, `case ${i} answered in ${ms} ms`);
  }
  // An announced length beyond the limit: 413 before any body is sent.
  const big = await exchange(head + "Content-Length: 100000000\r\n\r\n");
  assert.equal(statusOf(big.text), "413");
  assert.ok(big.ms < 2500, `answered in ${big.ms} ms`);
});

test("pipelined requests are answered in order on one connection", async () => {
  const c = connect();
  const body = JSON.stringify({ content: "hello" });
  await c.write(
    "GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" +
      `POST /tokenize HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}` +
      "GET /v1/models HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
  );
  await c.ended;
  const statuses = [...c.text().matchAll(/HTTP\/1\.1 (\d{3})/g)].map((m) => m[1]);
  assert.deepEqual(statuses, ["200", "200", "200"], c.text());
  const order = ["\"status\"", "\"tokens\"", "\"data\""].map((key) => c.text().indexOf(key));
  assert.ok(order[0] < order[1] && order[1] < order[2], c.text());
});

test("64 slow clients: /health answers within a second throughout; they get 408", async () => {
  const slow = Array.from({ length: 64 }, () => connect());
  const request = "POST /v1/completions HTTP/1.1\r\nHost: 127.0.0.1\r\n";
  let stop = false;
  const drip = (async () => {
    for (let i = 0; !stop && i < request.length; i++) {
      for (const c of slow) if (!c.closed()) c.socket.write(request[i]);
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  const times = [];
  for (let i = 0; i < 5; i++) {
    times.push(await healthMs());
    await new Promise((r) => setTimeout(r, 400));
  }
  assert.ok(Math.max(...times) < 1000, `/health took ${times.join(", ")} ms`);
  // The whole-request deadline (3 s here) ends each of them with a 408.
  await Promise.all(slow.map((c) => c.until((t) => t.includes("\r\n\r\n"), 8000, "a 408")));
  stop = true;
  await drip;
  const refused = slow.filter((c) => statusOf(c.text()) === "408").length;
  assert.equal(refused, 64, slow.map((c) => c.text().slice(0, 20)).join("|"));
  for (const c of slow) c.socket.destroy();
  assert.ok((await healthMs()) < 1000);
});

test("idle connections are closed; beyond --max-connections the server answers 503", async () => {
  const idle = connect();
  await Promise.race([idle.ended, new Promise((r) => setTimeout(r, 5000))]);
  assert.ok(idle.closed(), "an idle connection is closed after --idle-timeout");

  await waitFor(async () => metric(await metrics(server.url), "glmrt_http_open_connections") <= 1, 10000, "the others to close");
  const held = Array.from({ length: 100 }, () => connect());
  try {
    // Established (the listen backlog is short: some handshakes are retried).
    await Promise.all(held.map((c) => new Promise((r) => (c.socket.readyState === "open" ? r() : c.socket.once("connect", r)))));
    await new Promise((r) => setTimeout(r, 300));
    const extra = await exchange("GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", 3000);
    assert.equal(statusOf(extra.text), "503", extra.text);
  } finally {
    for (const c of held) c.socket.destroy();
  }
  await waitFor(async () => {
    try {
      return (await fetch(server.url + "/health")).status === 200;
    } catch {
      return false;
    }
  }, 5000, "room again");
});

test("many large bodies at once: all answered, the memory they hold bounded", async () => {
  const content = "word ".repeat(12000); // ~60 KB each, under the 64 KiB limit
  const body = JSON.stringify({ content });
  const answers = await Promise.all(
    Array.from({ length: 12 }, () =>
      fetch(server.url + "/tokenize", { method: "POST", headers: { "Content-Type": "application/json" }, body }),
    ),
  );
  for (const r of answers) {
    assert.equal(r.status, 200);
    assert.ok((await r.json()).count > 1000);
  }
  const m = await metrics(server.url);
  const peak = metric(m, "glmrt_http_body_bytes_peak");
  assert.ok(peak > 0 && peak <= 131072, `peak ${peak} within --max-body-memory`);
  await waitFor(async () => metric(await metrics(server.url), "glmrt_http_body_bytes") === 0, 5000, "every body released");
});

test("a web page cannot drive the server: foreign Host or Origin 403, non-JSON POST 415", async () => {
  const body = JSON.stringify({ content: "hi" });
  const post = (headers) =>
    exchange(`POST /tokenize HTTP/1.1\r\n${headers}Content-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`);
  const json = "Content-Type: application/json\r\n";
  const rebound = await post(`Host: evil.example:${server.port}\r\n${json}`);
  assert.equal(statusOf(rebound.text), "403", rebound.text);
  assert.match(rebound.text, /--allowed-host evil\.example/);
  const page = await exchange(`GET / HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n`);
  assert.equal(statusOf(page.text), "403");
  const crossOrigin = await post(`Host: 127.0.0.1:${server.port}\r\nOrigin: http://evil.example\r\n${json}`);
  assert.equal(statusOf(crossOrigin.text), "403", crossOrigin.text);
  const form = await post(`Host: 127.0.0.1:${server.port}\r\nContent-Type: text/plain\r\n`);
  assert.equal(statusOf(form.text), "415", form.text);
  // The server's own page, and clients without an Origin (SDKs, curl), are served.
  const own = await post(`Host: 127.0.0.1:${server.port}\r\nOrigin: http://127.0.0.1:${server.port}\r\n${json}`);
  assert.equal(statusOf(own.text), "200", own.text);
  const byName = await post(`Host: localhost:${server.port}\r\n${json}`);
  assert.equal(statusOf(byName.text), "200", byName.text);
});

test("listening beyond loopback without a key, or CORS for all, is warned about", async () => {
  const open = await startServer(["--host", "0.0.0.0", "--cors", "*", "--allowed-host", "box.lan"]);
  const log = open.log();
  assert.match(log, /warning: listening on 0\.0\.0\.0 without --api-key/);
  assert.match(log, /warning: --cors '\*'/);
  const reply = await new Promise((resolve) => {
    const socket = net.connect(open.port, "127.0.0.1");
    let text = "";
    socket.on("data", (d) => { text += d; });
    socket.on("close", () => resolve(text));
    socket.on("error", () => resolve(text));
    socket.write("GET /health HTTP/1.1\r\nHost: box.lan\r\nConnection: close\r\n\r\n");
  });
  assert.equal(statusOf(reply), "200", reply);
  assert.equal((await open.stop()).code, 0);
});
