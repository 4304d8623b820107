// The chat page in a real browser: Debian's headless Chromium, driven by
// playwright-core over the DevTools protocol (a typed message, a click, then
// waiting for what the page renders; --dump-dom could not type or click),
// against `glmrt serve` on the tiny fixture. Screenshots are kept in the build
// tree (GLMRT_ARTIFACTS/chat_page.png, and chat_page_long.png of a
// conversation longer than the context).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";
import { env, startServer } from "./glmrt_server.mjs";

let server;
let browser;
let profileDir;

before(async () => {
  server = await startServer();
  profileDir = fs.mkdtempSync(path.join(os.tmpdir(), "glmrt-chromium-"));
  browser = await chromium.launchPersistentContext(profileDir, {
    executablePath: process.env.GLMRT_CHROMIUM || "/usr/bin/chromium",
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
    viewport: { width: 1000, height: 700 },
  });
});

after(async () => {
  if (browser) await browser.close();
  if (profileDir) fs.rmSync(profileDir, { recursive: true, force: true });
  const { code, signal } = await server.stop();
  assert.equal(signal, null);
  assert.equal(code, 0);
});

// Sends `text` and waits for the answer to finish; returns what the page shows.
async function ask(page, text) {
  const before = await page.locator(".message.assistant").count();
  await page.fill("#prompt", text);
  await page.click("#send");
  const answer = page.locator(".message.assistant").nth(before);
  await answer.and(page.locator("[data-done=true]")).waitFor({ timeout: 120000 });
  return {
    answer: await answer.locator(".answer").textContent(),
    thinking: await answer.locator(".thinking-text").textContent(),
    thinkingShown: await answer.locator(".thinking").isVisible(),
    errors: await answer.locator(".error").count(),
    cutNotice: (await answer.locator(".notice.cut").count()) ? await answer.locator(".notice.cut").textContent() : null,
    finishReason: await answer.getAttribute("data-finish-reason"),
  };
}

// Whether `locator`'s element lies inside the visible part of the scrolled log.
async function inView(locator) {
  return locator.evaluate((element) => {
    const box = element.getBoundingClientRect();
    const log = document.getElementById("log").getBoundingClientRect();
    return box.height > 0 && box.top >= log.top - 1 && box.bottom <= log.bottom + 1;
  });
}

test("the page streams an answer, shows thinking apart, tokens/s and the expert hit rate", async () => {
  const page = browser.pages()[0] ?? (await browser.newPage());
  const consoleErrors = [];
  page.on("pageerror", (e) => consoleErrors.push(String(e)));
  await page.goto(server.url + "/");
  await page.locator("#model", { hasText: "glm_tiny" }).waitFor({ timeout: 30000 });
  await page.fill("#temperature", "0"); // greedy: the same text every run
  await page.fill("#max-tokens", "24");

  // Count how often the answer's text changes while it streams.
  await page.evaluate(() => {
    window.renders = 0;
    new MutationObserver(() => window.renders++).observe(document.getElementById("log"), {
      subtree: true,
      childList: true,
      characterData: true,
    });
  });

  // Thinking on (the default): the random model's text is reasoning.
  const thinking = await ask(page, "Hello there");
  assert.equal(thinking.errors, 0);
  assert.ok(thinking.thinkingShown, "the thinking box is shown");
  assert.ok(thinking.thinking.length > 0, "reasoning streamed into the thinking box");
  assert.ok((await page.evaluate(() => window.renders)) > 5, "the answer was rendered as it streamed");

  // Thinking off: the text is the answer, and no thinking box.
  await page.uncheck("#thinking");
  const direct = await ask(page, "And now answer directly");
  assert.equal(direct.errors, 0);
  assert.ok(direct.answer.length > 0, `an answer appears: ${JSON.stringify(direct)}`);
  assert.equal(direct.thinkingShown, false);

  const stats = await page.locator("#stats").textContent();
  assert.match(stats, /\d+ tokens · [\d.]+ tokens\/s/);
  // The hit rate is shown when experts were looked up in the cache (not
  // when every one was pinned, where it would say 100% of nothing).
  const m = await (await fetch(server.url + "/metrics")).text();
  const read = ["hits", "misses"].map((k) => Number((m.match(new RegExp(`^glmrt_expert_cache_${k}_total (\\S+)$`, "m")) || [])[1]));
  if (read[0] + read[1] > 0) assert.match(stats, /expert hit rate [\d.]+%/);
  else assert.doesNotMatch(stats, /expert hit rate/);
  assert.deepEqual(consoleErrors, []);

  fs.mkdirSync(env.artifacts, { recursive: true });
  const shot = path.join(env.artifacts, "chat_page.png");
  await page.screenshot({ path: shot, fullPage: true });
  assert.ok(fs.statSync(shot).size > 1000);

  // The conversation survives a reload: it reopens (its address names it)
  // and is listed; from a fresh visit it opens from the list.
  const answers = await page.locator(".message.assistant .answer").allTextContents();
  await page.reload();
  await page.locator(".message.assistant").nth(1).waitFor();
  assert.deepEqual(await page.locator(".message.assistant .answer").allTextContents(), answers);
  await page.goto(server.url + "/");
  assert.equal(await page.locator(".message").count(), 0, "a fresh visit starts a new chat");
  await page.locator("#conversations li", { hasText: "Hello there" }).locator(".open").click();
  await page.locator(".message.assistant").nth(1).waitFor();
  assert.deepEqual(await page.locator(".message.assistant .answer").allTextContents(), answers);

  assert.deepEqual(consoleErrors, []);
});

test("the page and its files: a Content-Security-Policy without inline script, files cached under a stamp", async () => {
  const page = await fetch(server.url + "/");
  assert.equal(page.status, 200);
  const csp = page.headers.get("content-security-policy");
  assert.match(csp, /script-src 'self';/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  const html = await page.text();
  assert.doesNotMatch(html, /<script>|@STAMP@/, "no inline script, every link stamped");
  const links = [...html.matchAll(/(?:src|href)="(\/page\/[^"]+)"/g)].map((m) => m[1]);
  assert.ok(links.length >= 8, `the page loads its files: ${links}`);
  for (const link of links) {
    assert.match(link, /\?v=[0-9a-f]{16}$/);
    const started = performance.now();
    const file = await fetch(server.url + link, { headers: { "Accept-Encoding": "gzip, deflate, br" } });
    assert.equal(file.status, 200, link);
    assert.match(file.headers.get("cache-control"), /max-age=31536000/);
    assert.match(file.headers.get("content-type"), link.includes(".css") ? /^text\/css/ : /^application\/javascript/);
    // Not compressed per request (brotli took seconds on highlight.js).
    if (link.includes(".js")) assert.equal(file.headers.get("content-encoding"), null, link);
    assert.ok((await file.arrayBuffer()).byteLength > 100, link);
    assert.ok(performance.now() - started < 2000, `${link} took ${performance.now() - started} ms`);
  }
});

// A canned answer as the server streams it (reasoning first, then the text in pieces).
function cannedStream(content, reasoning = "") {
  const chunk = (delta, finish = null) =>
    "data: " + JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta, finish_reason: finish }] }) + "\n\n";
  let body = reasoning ? chunk({ role: "assistant", reasoning_content: reasoning }) : "";
  for (let i = 0; i < content.length; i += 7) body += chunk({ content: content.slice(i, i + 7) });
  return body + chunk({}, "stop") + "data: [DONE]\n\n";
}

const markdownAnswer = [
  "Here is **bold** text and `inline code`.",
  "",
  "```python",
  "def increment(x):",
  "    return x + 1  # one more",
  "```",
  "",
  "| a | b |",
  "|---|---|",
  "| 1 | 2 |",
].join("\n");

const hostileAnswer = [
  "<img src=x onerror=\"window.pwned = 'img'\">",
  "<script>window.pwned = 'script'</script>",
  "[click me](javascript:window.pwned='link') and ![pic](http://example.invalid/x.png)",
].join("\n\n");

test("Stop ends a streaming answer where it was; it is kept, and the next message is sent", async () => {
  // An answer that streams its first words and then nothing (until stopped).
  const held = [];
  const slow = http.createServer((req, res) => {
    res.writeHead(200, { "Content-Type": "text/event-stream" });
    res.write(cannedStream("The first **words**").split("\n\n").slice(0, 3).join("\n\n") + "\n\n");
    held.push(res);
  });
  await new Promise((resolve) => slow.listen(0, "127.0.0.1", resolve));
  const page = await browser.newPage();
  const consoleErrors = [];
  page.on("pageerror", (e) => consoleErrors.push(String(e)));
  try {
    await page.route("**/v1/chat/completions", (route) =>
      route.continue({ url: `http://127.0.0.1:${slow.address().port}/v1/chat/completions` }));
    await page.goto(server.url + "/");
    await page.locator("#model", { hasText: "glm_tiny" }).waitFor({ timeout: 30000 });
    await page.fill("#prompt", "Go on for a long time");
    await page.click("#send");
    const stopped = page.locator(".message.assistant").first();
    // Its last words are shown though nothing follows them yet.
    await stopped.locator(".answer strong", { hasText: "words" }).waitFor({ timeout: 5000 });
    assert.ok(await page.locator("#send").isDisabled(), "one answer at a time");
    await page.click("#stop");
    await stopped.and(page.locator("[data-done=true]")).waitFor();
    assert.equal(await stopped.getAttribute("data-finish-reason"), null, "no finish reason: it was stopped");
    assert.equal(await stopped.locator(".error").count(), 0);
    assert.ok(await page.locator("#stop").isDisabled());
    await page.reload();
    await page.locator(".message.assistant .answer", { hasText: "The first" }).waitFor();
    await page.unroute("**/v1/chat/completions");
    await page.fill("#max-tokens", "4");
    const next = await ask(page, "And now?");
    assert.equal(next.errors, 0, JSON.stringify(next));
    assert.deepEqual(consoleErrors, []);
  } finally {
    await page.close();
    for (const res of held) res.destroy();
    await new Promise((resolve) => slow.close(resolve));
  }
});

test("answers render as sanitized markdown; system prompt, regenerate, edit and delete (canned answers)", async () => {
  const page = await browser.newPage();
  const consoleErrors = [];
  page.on("pageerror", (e) => consoleErrors.push(String(e)));
  const requests = [];
  const replies = [];
  const canned = (route) => {
    requests.push(route.request().postDataJSON());
    const [content, reasoning] = replies.shift() ?? ["(no canned reply left)"];
    return route.fulfill({ status: 200, contentType: "text/event-stream", body: cannedStream(content, reasoning) });
  };
  await page.route("**/v1/chat/completions", canned);
  await page.goto(server.url + "/");
  await page.locator("#model", { hasText: "glm_tiny" }).waitFor({ timeout: 30000 });
  await page.click("#system-box summary");
  await page.fill("#system", "You answer in markdown.");
  await page.click("#system-box summary"); // folded: its summary shows it

  replies.push([markdownAnswer, "I should show <b>code</b>."]);
  const first = await ask(page, "Show me code");
  assert.equal(first.errors, 0);
  assert.deepEqual(requests[0].messages, [
    { role: "system", content: "You answer in markdown." },
    { role: "user", content: "Show me code" },
  ]);
  const answer = page.locator(".message.assistant").last().locator(".answer");
  assert.equal(await answer.locator("strong").textContent(), "bold");
  const code = answer.locator("pre code.hljs.language-python");
  assert.match(await code.textContent(), /def increment\(x\):/);
  assert.ok((await code.locator("span.hljs-keyword").count()) >= 2, "the code is highlighted");
  assert.equal(await answer.locator(".code-block button.copy").count(), 1, "the code block has a copy button");
  await browser.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.url });
  await answer.locator(".code-block button.copy").click();
  await answer.locator(".code-block button.copy", { hasText: "Copied" }).waitFor();
  assert.equal(await page.evaluate(() => navigator.clipboard.readText()),
               "def increment(x):\n    return x + 1  # one more");
  assert.equal(await answer.locator("table td").count(), 2);
  assert.equal(first.thinking, "I should show <b>code</b>.", "thinking is shown apart, as text");
  assert.equal(await page.locator(".thinking-text b").count(), 0);

  // A hostile answer is shown as text and runs nothing.
  replies.push([hostileAnswer]);
  const hostile = await ask(page, "Say something hostile");
  assert.equal(hostile.errors, 0);
  const last = page.locator(".message.assistant").last().locator(".answer");
  assert.match(hostile.answer, /<img src=x onerror=/);
  assert.match(hostile.answer, /<script>window.pwned = 'script'<\/script>/);
  assert.equal(await last.locator("img, script").count(), 0);
  assert.equal(await last.locator("a").count(), 1, "only the image's http link is a link");
  assert.equal(await last.locator("a").getAttribute("href"), "http://example.invalid/x.png");
  await last.getByText("click me").click();
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.equal(await page.locator("img").count(), 0);
  fs.mkdirSync(env.artifacts, { recursive: true });
  const shot = path.join(env.artifacts, "chat_page_markdown.png");
  await page.screenshot({ path: shot });
  assert.ok(fs.statSync(shot).size > 1000);

  // Thinking between tags in the text (a server that did not split it) is shown apart too.
  replies.push(["<think>planning</think>The answer."]);
  const tagged = await ask(page, "Think in tags");
  assert.equal(tagged.thinking, "planning");
  assert.equal(tagged.answer.trim(), "The answer.");

  // Regenerate: the last answer is replaced, the question asked once.
  replies.push(["A **second** try."]);
  await page.locator(".message.assistant").last().locator("button.regenerate").click();
  await page.locator(".message.assistant").nth(2).locator("strong", { hasText: "second" }).waitFor();
  await page.locator(".message.assistant").nth(2).and(page.locator("[data-done=true]")).waitFor();
  assert.equal(await page.locator(".message.assistant").count(), 3);
  assert.equal(requests.at(-1).messages.filter((m) => m.content === "Think in tags").length, 1);
  assert.equal(requests.at(-1).messages.length, 6);

  // Edit the second question and resend: what followed it goes.
  replies.push(["Edited answer."]);
  await page.locator(".message.user").nth(1).locator("button.edit").click();
  await page.locator(".message.user .editor textarea").fill("Say something kind");
  await page.locator(".message.user .editor button[type=submit]").click();
  await page.locator(".message.assistant").nth(1).and(page.locator("[data-done=true]")).waitFor();
  assert.equal(await page.locator(".message.user").count(), 2);
  assert.equal(await page.locator(".message.assistant").count(), 2);
  assert.deepEqual(requests.at(-1).messages.map((m) => m.content).slice(-2).at(-1), "Say something kind");
  assert.equal(requests.at(-1).messages.length, 4);
  assert.equal((await page.locator(".message.assistant .answer").last().textContent()).trim(), "Edited answer.");


  // Kept with the conversation: the system prompt, the edited history.
  await page.reload();
  await page.locator(".message.assistant").nth(1).waitFor();
  assert.equal(await page.inputValue("#system"), "You answer in markdown.");
  assert.equal(await page.locator(".message.user").nth(1).locator(".text").textContent(), "Say something kind");
  assert.ok(await page.locator(".message.assistant pre code.hljs").first().isVisible());

  // A second tab on the same conversation: what it adds shows here too (so
  // this tab's next save keeps it).
  const other = await browser.newPage();
  await other.route("**/v1/chat/completions", canned);
  await other.goto(page.url());
  await other.locator(".message.assistant").nth(1).waitFor();
  replies.push(["Hello from the other tab."]);
  await ask(other, "Now from another tab");
  await page.locator(".message.user", { hasText: "Now from another tab" }).waitFor();
  await other.close();

  // A stored entry that is not a conversation is named, and left as it is.
  await page.evaluate(() => localStorage.setItem("glmrt-chat:broken", "{not json"));
  await page.reload();
  await page.locator("#storage-notice", { hasText: "glmrt-chat:broken" }).waitFor();
  assert.equal(await page.evaluate(() => localStorage.getItem("glmrt-chat:broken")), "{not json");
  await page.evaluate(() => localStorage.removeItem("glmrt-chat:broken"));
  await page.locator(".message.assistant").nth(1).waitFor();

  // Delete it (after the confirmation): it is no longer listed, a new chat is shown.
  const listed = await page.locator("#conversations li").count();
  page.once("dialog", (dialog) => dialog.accept());
  await page.locator("#conversations li.current button.delete").click();
  await page.waitForFunction((n) => document.querySelectorAll("#conversations li").length === n - 1, listed);
  assert.equal(await page.locator(".message").count(), 0);
  assert.deepEqual(consoleErrors, []);
  await page.close();
});

// The reference profile with a context of 512 tokens: a few long messages overflow it.
function smallContextProfile() {
  const text = fs.readFileSync(env.profile, "utf8");
  assert.match(text, /max_context: \d+/);
  const file = path.join(profileDir, "small-context.yaml");
  fs.writeFileSync(file, text.replace(/max_context: \d+/, "max_context: 512"));
  return file;
}

test("a conversation longer than the context keeps answering; errors and cut-off answers are shown in view", async () => {
  const small = await startServer([], { profile: smallContextProfile() });
  try {
    const page = await browser.newPage();
    const consoleErrors = [];
    page.on("pageerror", (e) => consoleErrors.push(String(e)));
    await page.goto(small.url + "/");
    await page.locator("#model", { hasText: "glm_tiny" }).waitFor({ timeout: 30000 });
    await page.fill("#temperature", "0");
    await page.fill("#max-tokens", "16");
    await page.uncheck("#thinking");

    // Each message is about a third of the context (as the server counts it).
    const long = (i) => `Message ${i}: ` + "the quick brown fox jumps over the lazy dog ".repeat(8);
    const counted = await (await fetch(small.url + "/tokenize", {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ content: long(1) }) })).json();
    assert.equal(counted.max_model_len, 512);
    assert.ok(counted.count > 100 && counted.count < 250, `a long message is ${counted.count} tokens`);
    for (let i = 1; i <= 6; ++i) {
      const answer = await ask(page, long(i));
      assert.equal(answer.errors, 0, `message ${i} answered: ${JSON.stringify(answer)}`);
    }
    const notices = page.locator(".notice.context");
    assert.ok((await notices.count()) >= 2, "each overflow says so");
    assert.ok(await notices.first().isVisible());
    assert.match(await notices.last().textContent(), /no longer fits the model's context \(512 tokens\): the oldest \d+ messages? (is|are) left out/);
    assert.ok((await page.locator(".message.dropped").count()) >= 4, "the dropped turns are marked");
    assert.equal(await page.locator(".message button.regenerate").count(), 1, "only the last answer offers Regenerate");
    for (const role of ["user", "assistant"])
      assert.equal(await page.locator(`.message.${role}`).last().getAttribute("class"), `message ${role}`,
                   `the last ${role} message is still in the context`);
    // The log scrolls inside the page: a tall window shows the whole conversation.
    await page.setViewportSize({ width: 1000, height: 2600 });
    fs.mkdirSync(env.artifacts, { recursive: true });
    const shot = path.join(env.artifacts, "chat_page_long.png");
    await page.screenshot({ path: shot, fullPage: true });
    assert.ok(fs.statSync(shot).size > 1000);
    await page.setViewportSize({ width: 1000, height: 700 });

    // A message longer than the whole context: the server's refusal is shown
    // in view, nothing earlier is dropped for it, and the next message works.
    const droppedBefore = await page.locator(".message.dropped").count();
    const tooLong = await ask(page, "the quick brown fox jumps over the lazy dog ".repeat(60));
    assert.equal(tooLong.errors, 1);
    const error = page.locator(".message.assistant").last().locator(".error");
    assert.match(await error.textContent(), /context holds 512/);
    assert.ok(await inView(error), "the error is scrolled into view");
    assert.equal(await page.locator(".message.dropped").count(), droppedBefore + 1, "only the refused message is left out");
    const after = await ask(page, "and a short one");
    assert.equal(after.errors, 0, JSON.stringify(after));

    // An answer cut by max_tokens says so.
    await page.fill("#max-tokens", "2");
    const cut = await ask(page, "tell me more");
    assert.equal(cut.finishReason, "length");
    assert.match(cut.cutNotice ?? "", /cut off at the length limit \(max tokens 2\)/);
    assert.ok(await inView(page.locator(".message.assistant").last().locator(".notice.cut")));
    assert.deepEqual(consoleErrors, []);
    await page.close();
  } finally {
    const { code } = await small.stop();
    assert.equal(code, 0);
  }
});
