// The chat page's conversations, kept in the browser's localStorage: one key
// per conversation ("glmrt-chat:" + id), so two tabs never overwrite each
// other's conversations. A conversation is
//   { id, title, system, updated, messages: [{ role, content, reasoning, ... }] }.
// An entry that cannot be read is left in place (and named), never deleted.
"use strict";

const ChatStore = (() => {
  const prefix = "glmrt-chat:";
  const removed = new Set(); // deleted here: an answer still arriving does not bring them back

  function newId() {
    return Date.now().toString(36) + "-" + Math.random().toString(36).slice(2, 8);
  }

  function create() {
    return { id: newId(), title: "", system: "", updated: Date.now(), messages: [] };
  }

  // Every stored conversation, the latest first; `unreadable` names the keys
  // whose content is not a conversation.
  function list() {
    const conversations = [];
    const unreadable = [];
    for (let i = 0; i < localStorage.length; ++i) {
      const key = localStorage.key(i);
      if (!key || !key.startsWith(prefix)) continue;
      try {
        const conversation = JSON.parse(localStorage.getItem(key));
        if (!conversation || !Array.isArray(conversation.messages)) throw new Error("no messages");
        conversations.push(conversation);
      } catch (e) {
        unreadable.push(key);
      }
    }
    conversations.sort((a, b) => (b.updated || 0) - (a.updated || 0));
    return { conversations, unreadable };
  }

  function load(id) {
    try {
      const conversation = JSON.parse(localStorage.getItem(prefix + id));
      return conversation && Array.isArray(conversation.messages) ? conversation : null;
    } catch (e) {
      return null;
    }
  }

  // Saves `conversation`; returns null, or why the browser refused (its storage full).
  function save(conversation) {
    if (removed.has(conversation.id)) return null;
    conversation.updated = Date.now();
    try {
      localStorage.setItem(prefix + conversation.id, JSON.stringify(conversation));
      return null;
    } catch (e) {
      return e.name === "QuotaExceededError"
        ? "the browser's storage for this page is full: this conversation is not saved (delete older ones)"
        : "this conversation could not be saved: " + e.message;
    }
  }

  function remove(id) {
    removed.add(id);
    localStorage.removeItem(prefix + id);
  }

  // The sidebar's name for a conversation: its first message's start.
  function titleOf(conversation) {
    const first = conversation.messages.find((m) => m.role === "user");
    const text = (first ? first.content : "").replace(/\s+/g, " ").trim();
    return text.length > 48 ? text.slice(0, 47) + "…" : text || "New chat";
  }

  return { create, list, load, save, remove, titleOf };
})();
