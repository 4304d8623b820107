// The chat page sends a message: the conversation fitted to the model's
// context (the oldest turns left out, and said so), the answer streamed in,
// the server's figures shown. Uses chat_page.js's conversation and views.
"use strict";

// The messages the model still sees (not left out, not refused, no error).
function liveMessages() {
  return conversation.messages.filter((m) => !m.dropped && !m.refused && !m.error);
}

function requestMessages(messages) {
  const out = [];
  if (conversation.system.trim()) out.push({ role: "system", content: conversation.system });
  for (const m of messages)
    out.push(m.role === "assistant" ? { role: m.role, content: m.content, reasoning_content: m.reasoning || "" }
                                    : { role: m.role, content: m.content });
  return out;
}

// The conversation's length in tokens as the server counts it (the chat
// template applied), and the model's context; null when the server cannot say.
async function tokenCount(messages) {
  try {
    const r = await fetch("/tokenize", { method: "POST", headers: headers(), body: JSON.stringify({ messages: requestMessages(messages) }) });
    if (!r.ok) return null;
    const body = await r.json();
    return { count: body.count, limit: body.max_model_len };
  } catch (e) { return null; }
}

// The oldest turn the model still sees (a user message and the answer after
// it), never the message being sent: its length, or 0.
function oldestTurn() {
  const live = liveMessages();
  if (live.length <= 1) return 0;
  let end = 1;
  while (end < live.length - 1 && live[end].role !== "user") end++;
  return end;
}

function dropOldestTurn() {
  const turn = liveMessages().slice(0, oldestTurn());
  for (const message of turn) {
    message.dropped = true;
    const box = boxOf.get(message);
    if (box) {
      box.classList.add("dropped");
      box.title = "no longer in the model's context";
    }
  }
  return turn.length;
}

// Room an answer needs: its max tokens, but at most a quarter of the context.
function answerRoom(limit) {
  return Math.min(Number($("max-tokens").value) || 512, Math.floor(limit / 4));
}

// Whether the message being sent fits the context without the turns before
// it (the system message kept); null when the server cannot say.
async function fitsAlone() {
  const alone = await tokenCount(liveMessages().slice(-1));
  return alone ? alone.count <= alone.limit : null;
}

// Drops the oldest turns until the conversation and room for the answer fit
// the model's context, as /tokenize counts it; a message that alone does not
// fit drops nothing (the server refuses it). Returns the messages dropped.
async function fitContext() {
  const all = await tokenCount(liveMessages());
  if (!all || all.count + answerRoom(all.limit) <= all.limit) return 0;
  if (!(await fitsAlone())) return 0;
  let dropped = 0;
  while (oldestTurn() > 0) {
    dropped += dropOldestTurn();
    const now = await tokenCount(liveMessages());
    if (!now || now.count + answerRoom(now.limit) <= now.limit) break;
  }
  return dropped;
}

function droppedNotice(userMessage, count) {
  const limit = contextLength ? " (" + contextLength + " tokens)" : "";
  userMessage.contextNotice = "The conversation no longer fits the model's context" + limit + ": the oldest " + count +
    (count === 1 ? " message is" : " messages are") + " left out of what the model sees (shown faded).";
  const notice = document.createElement("div");
  notice.className = "notice context";
  notice.textContent = userMessage.contextNotice;
  $("log").insertBefore(notice, boxOf.get(userMessage));
  notice.scrollIntoView({ block: "nearest" });
}

// Server-sent events from a fetch body: yields each `data:` payload.
async function* events(response) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const event = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      for (const line of event.split("\n"))
        if (line.startsWith("data: ")) yield line.slice(6);
    }
  }
}

// The server's own figures for the last answer and the expert cache.
async function serverStats() {
  try {
    const r = await fetch("/metrics", { headers: headers() });
    if (!r.ok) return null;
    const text = await r.text();
    const value = (name) => {
      const m = text.match(new RegExp("^" + name + " (\\S+)$", "m"));
      return m ? Number(m[1]) : NaN;
    };
    return { decode: value("glmrt_last_request_decode_tokens_per_second"),
             hitRate: value("glmrt_expert_cache_hit_rate"),
             // Read from disk or slots at all: a rate over pinned experts only says nothing.
             expertsRead: value("glmrt_expert_cache_hits_total") + value("glmrt_expert_cache_misses_total"),
             draftAcceptance: value("glmrt_draft_acceptance_rate") };
  } catch (e) { return null; }
}

function showStats(tokens, seconds, server) {
  const parts = [tokens + " tokens", (seconds > 0 ? (tokens / seconds).toFixed(1) : "–") + " tokens/s"];
  if (server) {
    if (!Number.isNaN(server.decode)) parts.push("server decode " + server.decode.toFixed(1) + " tokens/s");
    if (!Number.isNaN(server.hitRate) && server.expertsRead > 0) parts.push("expert hit rate " + (100 * server.hitRate).toFixed(1) + "%");
    if (!Number.isNaN(server.draftAcceptance))
      parts.push("draft acceptance " + (100 * server.draftAcceptance).toFixed(1) + "%");
  }
  $("stats").textContent = parts.join(" · ");
}

// The answer's text is rendered at most this often while it streams.
const renderInterval = 50;

async function send(text) {
  const userMessage = { role: "user", content: text };
  const shown = conversation;
  shown.messages.push(userMessage);
  controller = new AbortController(); // set first: the message shows no Regenerate
  renderLog(); // the previous answer loses its Regenerate button
  save();
  const answer = { role: "assistant", content: "", reasoning: "" };
  const view = assistantView(answer, true);
  const maxTokens = Number($("max-tokens").value) || 512;
  $("send").disabled = true;
  $("stop").disabled = false;
  let tokens = 0, usage = null, lastRender = 0, renderCost = 0, renderTimer = null;
  const render = () => {
    clearTimeout(renderTimer);
    renderTimer = null;
    const started = performance.now();
    view.update();
    lastRender = performance.now();
    renderCost = lastRender - started;
  };
  const start = performance.now();
  try {
    const dropped = await fitContext();
    if (dropped) droppedNotice(userMessage, dropped);
    let response;
    for (;;) {
      response = await fetch("/v1/chat/completions", {
        method: "POST", headers: headers(), signal: controller.signal, body: JSON.stringify({
          model: $("model").textContent,
          messages: requestMessages(liveMessages()),
          stream: true,
          stream_options: { include_usage: true },
          max_tokens: maxTokens,
          temperature: Number($("temperature").value),
          chat_template_kwargs: { enable_thinking: $("thinking").checked },
        }) });
      if (response.ok) break;
      const body = await response.json().catch(() => ({}));
      // The server counts otherwise than /tokenize did: drop a turn more and retry.
      if (body.error && body.error.code === "context_length_exceeded" && oldestTurn() > 0 &&
          (await fitsAlone()) !== false) {
        droppedNotice(userMessage, dropOldestTurn());
        continue;
      }
      throw new Error(body.error ? body.error.message : "HTTP " + response.status);
    }
    for await (const data of events(response)) {
      if (data === "[DONE]") break;
      const chunk = JSON.parse(data);
      if (chunk.error) throw new Error(chunk.error.message);
      if (chunk.usage) usage = chunk.usage;
      const choice = chunk.choices && chunk.choices[0];
      if (!choice) continue;
      const delta = choice.delta || {};
      if (delta.reasoning_content) {
        answer.reasoning += delta.reasoning_content;
        tokens++;
      }
      if (delta.content) {
        answer.content += delta.content;
        tokens++;
      }
      if (choice.finish_reason) answer.finish = choice.finish_reason;
      // A long answer takes long to render (and highlight) again: then less
      // often, and what came in between is rendered when that time is up.
      const wait = Math.max(renderInterval, 4 * renderCost) - (performance.now() - lastRender);
      if (wait <= 0 || !delta.content) render();
      else if (!renderTimer) renderTimer = setTimeout(render, wait);
      showStats(tokens, (performance.now() - start) / 1000, null);
      $("log").scrollTop = $("log").scrollHeight;
    }
  } catch (e) {
    if (e.name !== "AbortError") {
      // A message the server refused is not part of the conversation: later
      // messages must not fail because of it.
      userMessage.refused = true;
      const box = boxOf.get(userMessage);
      box.classList.add("dropped");
      box.title = "not sent: the server refused it";
      answer.error = e.message + " (this message is left out of the conversation)";
    }
  } finally {
    clearTimeout(renderTimer);
    controller = null;
    $("send").disabled = false;
    $("stop").disabled = true;
  }
  Object.assign(answer, splitThinking(answer.reasoning, answer.content));
  if (answer.finish === "length") {
    const generated = usage ? usage.completion_tokens : tokens;
    answer.cut = generated >= maxTokens
      ? "The answer was cut off at the length limit (max tokens " + maxTokens + ")."
      : "The answer was cut off: the model's context" + (contextLength ? " (" + contextLength + " tokens)" : "") + " is full.";
  }
  shown.messages.push(answer);
  if (shown !== conversation) { // another conversation was opened meanwhile: this one is kept as it was
    ChatStore.save(shown);
    renderSidebar();
    return;
  }
  save();
  const generated = usage ? usage.completion_tokens : tokens;
  showStats(generated, (performance.now() - start) / 1000, await serverStats());
  // Done once the server's figures are shown too.
  view.finish();
  const last = view.box.querySelector(".error, .notice.cut") || view.box;
  last.scrollIntoView({ block: "nearest" });
}

$("composer").addEventListener("submit", (event) => {
  event.preventDefault();
  const text = $("prompt").value.trim();
  if (!text || controller) return;
  $("prompt").value = "";
  send(text);
});
$("prompt").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    $("composer").requestSubmit();
  }
});
$("stop").addEventListener("click", () => { if (controller) controller.abort(); });
$("new-chat").addEventListener("click", () => openConversation(null));
// Another tab changed the stored conversations: the list follows, and so
// does the one shown (unless an answer streams into it), so that saving here
// does not overwrite what the other tab added.
window.addEventListener("storage", (event) => {
  if (!event.key || !event.key.startsWith("glmrt-chat:")) return;
  if (event.key === "glmrt-chat:" + conversation.id && !controller && event.newValue) {
    const changed = ChatStore.load(conversation.id);
    if (changed) {
      conversation = changed;
      conversation.system = conversation.system || "";
      $("system").value = conversation.system;
      showSystemSummary();
      renderLog();
    }
  }
  renderSidebar();
});
openConversation(location.hash.slice(1) || null);
loadModel();
