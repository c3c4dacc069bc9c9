// The reviewer page: ask, read the answer, open a citation in its section, say whether it was right.
// Everything goes through the front door's JSON API with the reviewer's own API key; text from the API is
// only ever set as textContent, never parsed as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
let current = null; // the last /v1/ask response
let rating = "";

// The tenant and the scopes are kept for the next visit (as ragmesh-<field id>); the API key only while this
// tab is open (sessionStorage): on a shared machine the next person to open the page must not find it.
localStorage.removeItem("ragmesh-api-key"); // kept for good by earlier versions of this page
for (const [id, store] of [["api-key", sessionStorage], ["tenant", localStorage], ["scopes", localStorage]]) {
  $(id).value = store.getItem(`ragmesh-${id}`) || "";
  $(id).addEventListener("change", () => store.setItem(`ragmesh-${id}`, $(id).value.trim()));
}

// The scopes to read with besides public (comma-separated; the key must hold each): an hr reviewer reads hr
// documents, and opens their passages, only by naming hr.
function scopes() {
  return $("scopes").value.split(",").map((s) => s.trim()).filter((s) => s);
}

async function call(method, path, body) {
  const headers = { "Content-Type": "application/json" };
  const key = $("api-key").value.trim();
  if (key) headers.Authorization = `Bearer ${key}`;
  const response = await fetch(path, { method, headers, body: body ? JSON.stringify(body) : undefined });
  const data = await response.json();
  if (!response.ok) {
    const error = data.error || {};
    throw new Error(`${error.code || response.status}: ${error.message || response.statusText}`);
  }
  return data;
}

function say(text, isError = false) {
  $("status").textContent = text;
  $("status").className = isError ? "error" : "";
}

// Python counts characters as code points, JavaScript strings as UTF-16 units: slice by code points.
function slice(chars, start, end) {
  return chars.slice(start, end).join("");
}

// Where the cited text lies in the chunk's section: the citation's document span moved by the chunk's own
// offsets, checked against the quote; else the quote's first place in the chunk; else the whole chunk.
function citedSpan(view, citation) {
  const chars = Array.from(view.chunk.section_text);
  let start = view.highlight_start;
  let end = view.highlight_end;
  if (citation && citation.quote) {
    const quote = Array.from(citation.quote);
    const at = start + citation.char_start - view.chunk.char_start;
    if (at >= 0 && slice(chars, at, at + quote.length) === citation.quote) return [chars, at, at + quote.length];
    for (let i = start; i + quote.length <= end; i++) {
      if (slice(chars, i, i + quote.length) === citation.quote) return [chars, i, i + quote.length];
    }
  }
  return [chars, start, end];
}

async function showPassage(chunkId, citation) {
  const params = new URLSearchParams();
  const tenant = $("tenant").value.trim();
  if (tenant) params.append("tenant_id", tenant);
  for (const scope of scopes()) params.append("access_scopes", scope);
  const query = params.toString() ? `?${params}` : "";
  let view;
  try {
    view = await call("GET", `/v1/chunks/${encodeURIComponent(chunkId)}${query}`);
  } catch (err) {
    say(`Could not open the passage: ${err.message}`, true);
    return;
  }
  const meta = view.chunk.meta;
  $("passage-title").textContent = meta.title || meta.document_id;
  $("passage-document").textContent = meta.document_id;
  $("passage-version").textContent = meta.version;
  $("passage-effective").textContent = `${meta.effective_from || "(always)"} to ${meta.effective_to || "now (in force)"}`;
  $("passage-path").textContent = view.chunk.heading_path.join(" > ");
  const [chars, start, end] = citedSpan(view, citation);
  const mark = document.createElement("mark");
  mark.id = "cited-span";
  mark.textContent = slice(chars, start, end);
  $("passage-section").replaceChildren(
    document.createTextNode(slice(chars, 0, start)),
    mark,
    document.createTextNode(slice(chars, end, chars.length)),
  );
  $("passage-panel").hidden = false;
  mark.scrollIntoView({ block: "center" });
}

function citeLink(index, citation) {
  const link = document.createElement("a");
  link.href = "#";
  link.className = "cite";
  link.dataset.index = String(index);
  link.textContent = `[${index}]`;
  link.addEventListener("click", (event) => {
    event.preventDefault();
    showPassage(citation.chunk_id, citation);
  });
  return link;
}

// The answer's text with each [n] marker turned into a link to citation n.
function renderAnswerText(text, citations) {
  const parts = [];
  let last = 0;
  for (const match of text.matchAll(/\[(\d+)\]/g)) {
    const index = Number(match[1]);
    if (index < 1 || index > citations.length) continue;
    parts.push(document.createTextNode(text.slice(last, match.index)), citeLink(index, citations[index - 1]));
    last = match.index + match[0].length;
  }
  parts.push(document.createTextNode(text.slice(last)));
  $("answer-text").replaceChildren(...parts);
}

// Where a passage sits, as the CLI and the chat door name it: its title, then its section path.
function whereOf(title, path) {
  const parts = [title, ...path].filter((part) => part);
  if (parts.length > 1 && parts[0].trim().toLowerCase() === parts[1].trim().toLowerCase()) parts.shift();
  return parts.join(" > ");
}

function renderAnswer(reply) {
  const answer = reply.answer;
  // The question answered, when the gateway read a misspelled word as the passages spell it.
  $("read-as").hidden = !reply.read_as;
  $("read-as").textContent = reply.read_as ? `Read as: ${reply.read_as}` : "";
  $("citations").replaceChildren();
  $("suggested").replaceChildren();
  $("passage-panel").hidden = true;
  $("abstention").hidden = !answer.abstained;
  if (answer.abstained) {
    $("answer-text").textContent = "No answer from the documents.";
    $("missing").textContent = `Missing: ${answer.missing || "the documents do not cover this"} (${answer.reason})`;
    for (const scored of reply.suggested_reading) {
      const item = document.createElement("li");
      const link = document.createElement("a");
      link.href = "#";
      link.className = "suggestion";
      const chunk = scored.chunk;
      link.textContent = `${chunk.meta.document_id}@${chunk.meta.version}: ${whereOf(chunk.meta.title, chunk.heading_path)}`;
      link.addEventListener("click", (event) => {
        event.preventDefault();
        showPassage(chunk.chunk_id, null);
      });
      item.append(link);
      $("suggested").append(item);
    }
  } else {
    renderAnswerText(answer.text, answer.citations);
    answer.citations.forEach((citation, i) => {
      const item = document.createElement("li");
      const where = whereOf(citation.title, citation.heading_path);
      item.append(citeLink(i + 1, citation), document.createTextNode(` ${citation.document_id}@${citation.version}${where ? ` — ${where}` : ""}`));
      $("citations").append(item);
    });
  }
  $("answer").hidden = false;
}

$("ask-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  const question = $("question").value.trim();
  if (!question) return;
  say("Asking…");
  $("ask").disabled = true;
  resetFeedback();
  try {
    current = await call("POST", "/v1/ask", {
      question,
      tenant_id: $("tenant").value.trim(),
      filters: { access_scopes: scopes() },
    });
    renderAnswer(current);
    say(current.answer.abstained ? "The system abstained." : `Answered with ${current.answer.citations.length} citation(s).`);
  } catch (err) {
    say(err.message, true);
  } finally {
    $("ask").disabled = false;
  }
});

function resetFeedback() {
  rating = "";
  for (const button of document.querySelectorAll(".rating")) button.setAttribute("aria-pressed", "false");
  $("send-feedback").disabled = true;
  $("feedback-status").textContent = "";
}

for (const button of document.querySelectorAll(".rating")) {
  button.addEventListener("click", () => {
    rating = button.dataset.rating;
    for (const other of document.querySelectorAll(".rating")) other.setAttribute("aria-pressed", String(other === button));
    $("send-feedback").disabled = false;
  });
}

$("feedback-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  if (!current || !rating) return;
  $("send-feedback").disabled = true;
  try {
    const reply = await call("POST", "/v1/feedback", {
      answer_id: current.answer_id,
      rating,
      tenant_id: $("tenant").value.trim(),
      expected_document_id: $("expected-document").value.trim(),
      comment: $("comment").value.trim(),
    });
    $("feedback-status").textContent = `Feedback stored (${reply.feedback_id}).`;
  } catch (err) {
    $("feedback-status").textContent = err.message;
    $("send-feedback").disabled = false;
  }
});
