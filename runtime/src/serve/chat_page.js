// The chat page's behaviour: conversations (chat_store.js) shown with their
// markdown rendered (chat_markdown.js), answers streamed from the same
// server's /v1/chat/completions.
"use strict";

const $ = (id) => document.getElementById(id);
let conversation = ChatStore.create(); // the one shown
let controller = null;                 // aborts the answer being streamed
let contextLength = 0;                 // the model's context in tokens (/v1/models' max_model_len)
const boxOf = new Map();               // each message shown -> its box

const keyInput = $("api-key");
keyInput.value = localStorage.getItem("glmrt-api-key") || "";
keyInput.addEventListener("change", () => { localStorage.setItem("glmrt-api-key", keyInput.value); loadModel(); });

function headers() {
  const h = { "Content-Type": "application/json" };
  if (keyInput.value) h["Authorization"] = "Bearer " + keyInput.value;
  return h;
}

async function loadModel() {
  try {
    const r = await fetch("/v1/models", { headers: headers() });
    const body = await r.json();
    $("model").textContent = r.ok ? body.data[0].id : (body.error ? body.error.message : "HTTP " + r.status);
    if (r.ok) contextLength = body.data[0].max_model_len || 0;
  } catch (e) { $("model").textContent = "server unreachable"; }
}

// ---- storage and the sidebar ----

function save() {
  if (!conversation.messages.length) return; // an empty chat is not listed
  conversation.title = ChatStore.titleOf(conversation);
  const problem = ChatStore.save(conversation);
  showStorageNotice(problem);
  if (location.hash !== "#" + conversation.id) window.history.replaceState(null, "", "#" + conversation.id);
  renderSidebar();
}

function showStorageNotice(text) {
  $("storage-notice").hidden = !text;
  $("storage-notice").textContent = text || "";
}

function renderSidebar() {
  const { conversations, unreadable } = ChatStore.list();
  const items = conversations.map((c) => {
    const item = document.createElement("li");
    item.dataset.id = c.id;
    if (c.id === conversation.id) item.className = "current";
    const open = document.createElement("button");
    open.type = "button";
    open.className = "open";
    open.textContent = c.title || ChatStore.titleOf(c);
    open.addEventListener("click", () => openConversation(c.id));
    const remove = document.createElement("button");
    remove.type = "button";
    remove.className = "delete";
    remove.textContent = "×";
    remove.title = "delete this conversation";
    remove.setAttribute("aria-label", remove.title);
    remove.addEventListener("click", () => deleteConversation(c));
    item.append(open, remove);
    return item;
  });
  $("conversations").replaceChildren(...items);
  if (unreadable.length)
    showStorageNotice(unreadable.length + " stored conversation(s) could not be read and are left as they are " +
                      "(localStorage " + unreadable.join(", ") + ")");
}

function openConversation(id) {
  if (controller) controller.abort();
  const found = id ? ChatStore.load(id) : null;
  conversation = found || ChatStore.create();
  conversation.system = conversation.system || "";
  window.history.replaceState(null, "", found ? "#" + found.id : location.pathname);
  $("system").value = conversation.system || "";
  showSystemSummary();
  $("stats").textContent = "";
  renderLog();
  renderSidebar();
}

function deleteConversation(c) {
  if (!confirm("Delete the conversation “" + (c.title || ChatStore.titleOf(c)) + "”?")) return;
  ChatStore.remove(c.id);
  if (c.id === conversation.id) openConversation(null);
  else renderSidebar();
}

function showSystemSummary() {
  const text = conversation.system.trim();
  $("system-summary").textContent = text ? "· " + (text.length > 60 ? text.slice(0, 59) + "…" : text) : "";
}

$("system").addEventListener("input", () => {
  conversation.system = $("system").value;
  showSystemSummary();
  save();
});

// ---- the conversation shown ----

async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
  } catch (e) { // not a secure context (a LAN address over http): the old way
    const area = document.createElement("textarea");
    area.value = text;
    document.body.appendChild(area);
    area.select();
    document.execCommand("copy");
    area.remove();
  }
}

function copyButton(getText, title) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "copy";
  button.textContent = "Copy";
  button.title = title;
  button.addEventListener("click", async () => {
    await copyText(getText());
    button.textContent = "Copied";
    setTimeout(() => { button.textContent = "Copy"; }, 1500);
  });
  return button;
}

function actionButton(label, className, action) {
  const button = document.createElement("button");
  button.type = "button";
  button.className = className;
  button.textContent = label;
  button.addEventListener("click", () => { if (!controller) action(); });
  return button;
}

function messageBox(role, message) {
  const box = document.createElement("div");
  box.className = "message " + role;
  if (message.dropped || message.refused) {
    box.classList.add("dropped");
    box.title = message.refused ? "not sent: the server refused it" : "no longer in the model's context";
  }
  const label = document.createElement("div");
  label.className = "role";
  label.textContent = role;
  box.appendChild(label);
  boxOf.set(message, box);
  return box;
}

function addNotice(parent, text, kind) {
  const notice = document.createElement("div");
  notice.className = "notice " + kind;
  notice.textContent = text;
  parent.appendChild(notice);
  return notice;
}

function renderUser(message, index) {
  if (message.contextNotice) addNotice($("log"), message.contextNotice, "context");
  const box = messageBox("user", message);
  const body = document.createElement("div");
  body.className = "text";
  body.textContent = message.content;
  const tools = document.createElement("div");
  tools.className = "tools";
  tools.append(copyButton(() => message.content, "copy this message"),
               actionButton("Edit", "edit", () => editMessage(index, body)));
  // Its answer never came (the page was closed or reloaded meanwhile): ask again.
  if (index === conversation.messages.length - 1 && !controller)
    tools.append(actionButton("Regenerate", "regenerate", regenerate));
  box.append(body, tools);
  $("log").appendChild(box);
}

// A model's text may hold its thinking between <think> tags when the server
// did not split it: shown apart all the same, never as a bare tag.
function splitThinking(reasoning, content) {
  const close = content.indexOf("</think>");
  if (close >= 0)
    return { reasoning: reasoning + content.slice(0, close).replace("<think>", ""), content: content.slice(close + 8).trimStart() };
  const open = content.trimStart();
  if (open.startsWith("<think>")) return { reasoning: reasoning + open.slice(7), content: "" };
  return { reasoning, content };
}

// The assistant's box; `view.update(message)` shows its text so far.
function assistantView(message, isLast) {
  const box = messageBox("assistant", message);
  const thinking = document.createElement("details");
  thinking.className = "thinking";
  const summary = document.createElement("summary");
  summary.textContent = "thinking";
  const thinkingText = document.createElement("div");
  thinkingText.className = "thinking-text";
  thinking.append(summary, thinkingText);
  const answer = document.createElement("div");
  answer.className = "answer";
  const tools = document.createElement("div");
  tools.className = "tools";
  tools.append(copyButton(() => splitThinking(message.reasoning || "", message.content || "").content, "copy this answer"));
  if (isLast) tools.append(actionButton("Regenerate", "regenerate", regenerate));
  box.append(thinking, answer, tools);
  $("log").appendChild(box);
  const update = () => {
    const shown = splitThinking(message.reasoning || "", message.content || "");
    thinking.hidden = !shown.reasoning;
    if (thinkingText.textContent !== shown.reasoning) thinkingText.textContent = shown.reasoning;
    ChatMarkdown.render(answer, shown.content, copyButton);
  };
  const finish = () => {
    update();
    thinking.open = false;
    if (message.finish) box.dataset.finishReason = message.finish;
    if (message.error) {
      const error = document.createElement("div");
      error.className = "error";
      error.textContent = message.error;
      box.insertBefore(error, tools);
    }
    if (message.cut) box.insertBefore(addNotice(box, message.cut, "cut"), tools);
    box.dataset.done = "true";
  };
  thinking.open = true;
  return { box, thinking, thinkingText, update, finish };
}

function renderLog() {
  boxOf.clear();
  $("log").replaceChildren();
  const messages = conversation.messages;
  messages.forEach((message, i) => {
    if (message.role === "user") renderUser(message, i);
    else assistantView(message, i === messages.length - 1).finish();
  });
}

function editMessage(index, body) {
  const message = conversation.messages[index];
  const editor = document.createElement("form");
  editor.className = "editor";
  const area = document.createElement("textarea");
  area.value = message.content;
  area.rows = Math.min(12, message.content.split("\n").length + 1);
  const resend = actionButton("Send", "primary", () => {});
  resend.type = "submit";
  const cancel = actionButton("Cancel", "cancel", () => editor.replaceWith(body));
  editor.append(area, resend, cancel);
  editor.addEventListener("submit", (event) => {
    event.preventDefault();
    const text = area.value.trim();
    if (!text || controller) return;
    // What followed the edited message answered the old text: it goes.
    conversation.messages.splice(index);
    renderLog();
    send(text);
  });
  body.replaceWith(editor);
  area.focus();
}

function regenerate() {
  const last = conversation.messages.findLastIndex((m) => m.role === "user");
  if (last < 0) return;
  const text = conversation.messages[last].content;
  conversation.messages.splice(last);
  renderLog();
  send(text);
}
