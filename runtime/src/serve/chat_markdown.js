// Markdown of the model's answers to HTML for the chat page: marked (Debian's
// libjs-marked) parses, highlight.js colours code. A model's text is not
// trusted: raw HTML in it is shown as text, links keep only safe protocols,
// images become links (nothing is fetched), and what marked produced is
// filtered once more to an allowlist of elements and attributes before it
// enters the page.
"use strict";

const ChatMarkdown = (() => {
  const escapeHtml = (text) =>
    String(text).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);

  // Undoes marked's own escaping of a link target before it is checked.
  const unescapeHtml = (text) => {
    const area = document.createElement("textarea");
    area.innerHTML = text;
    return area.value;
  };

  const safeProtocols = new Set(["http:", "https:", "mailto:"]);
  function safeHref(href) {
    try {
      const url = new URL(unescapeHtml(href || ""), location.href);
      return safeProtocols.has(url.protocol) ? url.href : null;
    } catch (e) {
      return null;
    }
  }

  // Auto-detection tries every language: past this size a block is left plain.
  const autoDetectLimit = 20000;
  function highlight(code, infostring) {
    const lang = ((infostring || "").match(/^[\w+#.-]*/) || [""])[0].toLowerCase();
    if (lang && hljs.getLanguage(lang)) return { html: hljs.highlight(lang, code, true).value, lang };
    if (code.length <= autoDetectLimit) {
      const auto = hljs.highlightAuto(code);
      return { html: auto.value, lang: auto.language || "" };
    }
    return { html: escapeHtml(code), lang: "" };
  }

  hljs.configure({ hideUpgradeWarningAcceptNoSupportOrSecurityUpdates: true });
  marked.setOptions({ headerIds: false, mangle: false, gfm: true, breaks: false });
  marked.use({
    renderer: {
      // Raw HTML is shown as the text it is (a block of it as a paragraph).
      html: (html) => (html.endsWith("\n") ? "<p>" + escapeHtml(html.trim()) + "</p>\n" : escapeHtml(html)),
      code(code, infostring) {
        const { html, lang } = highlight(code.replace(/\n$/, ""), infostring);
        const langClass = lang ? " language-" + lang.replace(/[^\w+#.-]/g, "") : "";
        return '<pre><code class="hljs' + langClass + '">' + html + "</code></pre>\n";
      },
      link(href, title, text) {
        const safe = safeHref(href);
        if (!safe) return text;
        return '<a href="' + escapeHtml(safe) + '"' + (title ? ' title="' + escapeHtml(unescapeHtml(title)) + '"' : "") +
               ' rel="noopener noreferrer" target="_blank">' + text + "</a>";
      },
      image(href, title, text) {
        const safe = safeHref(href);
        const label = "[image: " + (text || href) + "]";
        return safe ? '<a href="' + escapeHtml(safe) + '" rel="noopener noreferrer" target="_blank">' + label + "</a>" : label;
      },
    },
  });

  // What may stay of marked's output (anything else becomes its text).
  const allowed = {
    A: ["href", "title", "rel", "target"], B: [], BLOCKQUOTE: [], BR: [], CODE: ["class"], DEL: [], EM: [],
    H1: [], H2: [], H3: [], H4: [], H5: [], H6: [], HR: [], I: [], INPUT: ["type", "checked", "disabled"],
    LI: [], OL: ["start"], P: [], PRE: [], SPAN: ["class"], STRONG: [], TABLE: [], TBODY: [], TD: ["align"],
    TH: ["align"], THEAD: [], TR: [], UL: [],
  };
  function clean(node) {
    for (const child of [...node.childNodes]) {
      if (child.nodeType === Node.TEXT_NODE) continue;
      if (child.nodeType !== Node.ELEMENT_NODE || !(child.tagName in allowed)) {
        child.replaceWith(document.createTextNode(child.nodeType === Node.ELEMENT_NODE ? child.textContent : ""));
        continue;
      }
      for (const attribute of [...child.attributes])
        if (!allowed[child.tagName].includes(attribute.name)) child.removeAttribute(attribute.name);
      if (child.tagName === "A" && !safeHref(child.getAttribute("href"))) child.removeAttribute("href");
      if (child.tagName === "INPUT" && child.getAttribute("type") !== "checkbox") child.remove();
      else clean(child);
    }
  }

  // Puts the HTML of `markdown` into `element`, each code block with a copy button.
  function render(element, markdown, copyButton) {
    const template = document.createElement("template"); // inert: nothing in it loads or runs
    template.innerHTML = marked.parse(markdown);
    clean(template.content);
    for (const pre of template.content.querySelectorAll("pre")) {
      const wrapper = document.createElement("div");
      wrapper.className = "code-block";
      pre.replaceWith(wrapper);
      wrapper.append(copyButton(() => pre.textContent, "copy code"), pre);
    }
    element.replaceChildren(template.content);
  }

  return { render, escapeHtml };
})();
