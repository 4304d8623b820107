// The chat page in a real browser: Debian's headless Chromium, driven by
// playwright-core over the DevTools protocol (a typed message, a click, then
// waiting for what the page renders; --dump-dom could not type or click),
// against `glmrt serve` on the tiny fixture. A screenshot is kept in the build
// tree (GLMRT_ARTIFACTS/chat_page.png).
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
  };
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
