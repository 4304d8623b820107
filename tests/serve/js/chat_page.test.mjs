// The chat page in a real browser: Debian's headless Chromium, driven by
// playwright-core over the DevTools protocol (a typed message, a click, then
// waiting for what the page renders; --dump-dom could not type or click),
// against `glmrt serve` on the tiny fixture. Screenshots are kept in the build
// tree (GLMRT_ARTIFACTS/chat_page.png, and chat_page_long.png of a
// conversation longer than the context).
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
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
