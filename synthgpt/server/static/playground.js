// The synthgpt playground and journal viewer. Plain DOM, no framework, no build step.
// Every value from the server is written with textContent/append (never innerHTML): journaled requests are
// whatever clients sent.
"use strict";

const TOKEN_KEY = "synthgpt-admin-token";
const JOURNAL_ROWS = 200;
const POLL_MS = 1000;

const EXAMPLES = {
  chat: {
    "Question": {model: "gpt-4o", messages: [{role: "user", content: "Tell me about tide pools"}]},
    "Streamed": {model: "gpt-4o", stream: true, stream_options: {include_usage: true},
      messages: [{role: "user", content: "Give me three ideas for a rainy afternoon"}]},
    "Tool call": {model: "gpt-4o", messages: [{role: "user", content: "What's the weather in Lisbon?"}],
      tools: [{type: "function", function: {name: "get_weather", description: "Current weather",
        parameters: {type: "object", properties: {city: {type: "string"}}, required: ["city"]}}}]},
    "Structured output": {model: "gpt-4o", messages: [{role: "user", content: "A user profile"}],
      response_format: {type: "json_schema", json_schema: {name: "profile", schema: {type: "object",
        properties: {name: {type: "string"}, age: {type: "integer"}}, required: ["name", "age"]}}}},
    "Rate limit (trigger)": {model: "gpt-4o", messages: [{role: "user", content: "hello !MOCK_ERROR:429!"}]},
  },
  responses: {
    "Question": {model: "gpt-4o", input: "Tell me about tide pools"},
    "Streamed": {model: "gpt-4o", input: "How do I brew green tea?", stream: true},
    "Tool call": {model: "gpt-4o", input: "What's the weather in Lisbon?", tools: [{type: "function",
      name: "get_weather", parameters: {type: "object", properties: {city: {type: "string"}}}}]},
  },
  messages: {
    "Question": {model: "claude-sonnet-4-5", max_tokens: 512,
      messages: [{role: "user", content: "Tell me about tide pools"}]},
    "Streamed": {model: "claude-sonnet-4-5", max_tokens: 512, stream: true,
      messages: [{role: "user", content: "Compare tea and coffee"}]},
    "Tool call": {model: "claude-sonnet-4-5", max_tokens: 512,
      messages: [{role: "user", content: "What's the weather in Lisbon?"}],
      tools: [{name: "get_weather", description: "Current weather",
        input_schema: {type: "object", properties: {city: {type: "string"}}}}]},
  },
  embeddings: {
    "Two texts": {model: "text-embedding-3-small", input: ["tide pools", "rock pools"], dimensions: 4},
  },
  neutral: {
    "Question": {api: "chat", model: "gpt-4o", messages: [{role: "user", content: "Tell me about tide pools"}]},
  },
};

const $ = (id) => document.getElementById(id);
let server = {seed: 0, apis: Object.keys(EXAMPLES)};

class NeedsToken extends Error {}

function el(tag, props, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props || {})) {
    if (key === "class") node.className = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value);
  }
  for (const child of children) if (child !== null && child !== undefined) node.append(child);
  return node;
}

function json(value) {
  return JSON.stringify(value, null, 2);
}

// ------------------------------------------------------------------------------------------ admin token

async function call(path, options = {}) {
  const headers = Object.assign({}, options.headers || {});
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) headers["Authorization"] = "Bearer " + token;
  const response = await fetch(path, Object.assign({}, options, {headers}));
  if (response.status === 401) {
    const body = await response.json().catch(() => ({}));
    askToken(token ? ((body.error || {}).message || "The token was refused.") : "");
    throw new NeedsToken();
  }
  return response;
}

function askToken(message) {
  $("token-form").hidden = false;
  $("token-error").textContent = message;
  $("token").focus();
}

$("token-form").addEventListener("submit", (event) => {
  event.preventDefault();
  sessionStorage.setItem(TOKEN_KEY, $("token").value.trim());
  $("token-form").hidden = true;
  start();
});

function showLoadError(error) {
  if (error instanceof NeedsToken) return;
  $("load-error").hidden = false;
  $("load-error").textContent = String(error);
}

// ------------------------------------------------------------------------------------------------ tabs

function showTab(name) {
  for (const tab of document.querySelectorAll("nav button")) {
    const selected = tab.dataset.panel === name;
    tab.setAttribute("aria-selected", String(selected));
    $(tab.dataset.panel).hidden = !selected;
  }
  if (name === "journal") loadJournal(true).catch(showLoadError);
  if (name === "rules") loadRules().catch(showLoadError);
  history.replaceState(null, "", "#" + name);
}

for (const tab of document.querySelectorAll("nav button")) {
  tab.addEventListener("click", () => showTab(tab.dataset.panel));
}

// ------------------------------------------------------------------------------------------ playground

function fillExamples() {
  const api = $("pg-api").value;
  const select = $("pg-example");
  const names = Object.keys(EXAMPLES[api] || {});
  select.replaceChildren(el("option", {value: ""}, "(your own)"), ...names.map((name) => el("option", {value: name}, name)));
  select.value = names[0] || "";
  useExample();
}

function useExample() {
  const example = (EXAMPLES[$("pg-api").value] || {})[$("pg-example").value];
  if (example) $("pg-request").value = json(example);
}

$("pg-api").addEventListener("change", fillExamples);
$("pg-example").addEventListener("change", useExample);
$("pg-request").addEventListener("input", () => { $("pg-example").value = ""; });
$("pg-run").addEventListener("click", () => runPlayground(null).catch(showLoadError));
$("pg-request").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) runPlayground(null).catch(showLoadError);
});

function seedOf(input, fallback) {
  const text = input.value.trim();
  return text === "" ? fallback : Number(text);
}

async function explain(api, request, seed) {
  const response = await call("explain", {method: "POST", headers: {"content-type": "application/json"},
    body: JSON.stringify({api, request, seed})});
  const body = await response.json();
  if (!response.ok) throw new Error((body.error || {}).message || ("HTTP " + response.status));
  return body;
}

// `replayed`: the journaled call being replayed ({index, rule, body}), to say whether it answers the same
async function runPlayground(replayed) {
  const error = $("pg-error");
  error.hidden = true;
  $("pg-replay").hidden = true;
  let request;
  try {
    request = JSON.parse($("pg-request").value);
  } catch (e) {
    error.hidden = false;
    error.textContent = "The request is not valid JSON: " + e.message;
    return;
  }
  const api = $("pg-api").value;
  const seedA = seedOf($("pg-seed"), server.seed);
  const seedB = seedOf($("pg-seed-b"), seedA + 1);
  let a, b;
  try {
    [a, b] = await Promise.all([explain(api, request, seedA), explain(api, request, seedB)]);
  } catch (e) {
    if (e instanceof NeedsToken) return;
    error.hidden = false;
    error.textContent = e.message;
    return;
  }
  $("pg-result").hidden = false;
  const winner = a.trace.find((t) => t.matched);
  $("pg-rule").textContent = a.rule || "none";
  $("pg-rule-source").textContent = winner && winner.source ? "(" + winner.source + ")" : "";
  $("pg-problem").hidden = !a.error;
  $("pg-problem").textContent = a.error || "";
  $("pg-trace").replaceChildren(...a.trace.map(traceItem));
  renderAnswer($("pg-answer-a"), a);
  renderAnswer($("pg-answer-b"), b);
  if (replayed) {
    const same = JSON.stringify(a.answer.body) === replayed.body;
    $("pg-replay").hidden = false;
    $("pg-replay").className = same ? "notice same" : "notice differs";
    $("pg-replay").textContent = same
      ? "Replayed call #" + replayed.index + ": the same answer as the journal's, from rule " + replayed.rule + "."
      : "Replayed call #" + replayed.index + ": another answer than the journal's (it came from rule " +
        replayed.rule + "). Rules reloaded, a times or sequence rule, or another clock reading change answers.";
  }
}

function traceItem(t) {
  const source = t.source ? el("span", {class: "muted"}, " (" + t.source + ")") : null;
  if (t.matched) {
    const caps = Object.entries(t.captures);
    const captured = caps.length ? " — captures " + caps.map(([k, v]) => k + "=" + JSON.stringify(v)).join(", ") : "";
    return el("li", {class: "hit"}, el("span", {class: "name"}, t.rule), source, " answers" + captured);
  }
  let why;
  if (t.error) why = el("span", {class: "why"}, " its matcher raised ", el("code", {}, t.error));
  else if (t.used_up) why = el("span", {class: "why"}, " matched, but its times are used up");
  else why = el("span", {class: "why"}, " did not match: ", el("code", {}, t.failed), " is false");
  return el("li", {}, el("span", {class: "name"}, t.rule), source, why);
}

function statusBadge(status) {
  return el("span", {class: status === 200 ? "status-ok" : "status-bad"}, String(status));
}

function framesTable(frames) {
  const rows = frames.map((f, i) => el("tr", {},
    el("td", {class: "num"}, String(i)),
    el("td", {class: "num"}, f.at_ms.toFixed(1)),
    el("td", {class: "num"}, "+" + f.delay_ms.toFixed(1)),
    el("td", {}, f.event || ""),
    el("td", {class: "data"}, f.data)));
  return el("table", {class: "frames"},
    el("thead", {}, el("tr", {}, el("th", {}, "#"), el("th", {}, "at ms"), el("th", {}, "wait ms"),
      el("th", {}, "event"), el("th", {}, "data"))),
    el("tbody", {}, ...rows));
}

function answerParts(answer) {
  const parts = [];
  const how = answer.status !== 200 ? "error body" : answer.stream ? "streamed (JSON shown for comparison)"
    : "JSON body";
  parts.push(el("p", {}, "Status ", statusBadge(answer.status), " · " + how +
    (answer.first_delay_ms ? " · first byte after " + answer.first_delay_ms + " ms" : "")));
  parts.push(el("h3", {}, "As JSON"), el("pre", {class: "answer-json"}, json(answer.body)));
  if (answer.frames.length) {
    parts.push(el("h3", {}, "As SSE frames (" + answer.frames.length + ")"), framesTable(answer.frames));
    if (answer.aborts) parts.push(el("p", {class: "error"}, "…then the connection is dropped."));
  }
  return parts;
}

function renderAnswer(box, result) {
  const seed = el("span", {class: "muted"}, result.answer_seed ? " · answer seed " + result.answer_seed : "");
  box.replaceChildren(el("h2", {}, "Seed " + result.seed, seed), ...answerParts(result.answer));
}

// --------------------------------------------------------------------------------------------- journal

let journalKey = "";
let selectedCall = null;

function journalQuery() {
  const params = new URLSearchParams();
  for (const [param, id] of [["rule", "j-rule"], ["api", "j-api"], ["model", "j-model"]]) {
    const value = $(id).value.trim();
    if (value) params.set(param, value);
  }
  return params;
}

function callStatus(c) {
  return c.output.error ? c.output.error.status : 200;
}

async function loadJournal(force) {
  const params = journalQuery();
  // the journal's counters are cheap to read; the calls are read again only when they moved
  const state = await (await call("journal")).json();
  const key = [params.toString(), $("j-status").value, state.total, state.kept].join("|");
  if (!force && key === journalKey) return;
  journalKey = key;
  params.set("limit", String(JOURNAL_ROWS));
  let response = await call("calls?" + params);
  const total = Number(response.headers.get("x-total-count") || "0");
  if (total > JOURNAL_ROWS) {  // the newest page
    params.set("offset", String(total - JOURNAL_ROWS));
    response = await call("calls?" + params);
  }
  let calls = await response.json();
  const status = $("j-status").value;
  if (status) calls = calls.filter((c) => (callStatus(c) === 200) === (status === "ok"));
  calls.reverse();  // newest first
  $("j-count").textContent = total + " call" + (total === 1 ? "" : "s") + " in the journal";
  $("j-table").tBodies[0].replaceChildren(...calls.map(journalRow));
}

function answerSummary(c) {
  if (c.output.error) return c.output.error.message || "error";
  if (c.output.tool_calls.length) return c.output.tool_calls.map((t) => t.name + "(" + t.arguments + ")").join(", ");
  return c.output.text;
}

function journalRow(c) {
  const row = el("tr", {"data-index": String(c.index)},
    el("td", {}, String(c.index)), el("td", {}, c.api), el("td", {}, c.model), el("td", {}, c.rule),
    el("td", {}, statusBadge(callStatus(c))), el("td", {}, c.request.stream ? "yes" : ""),
    el("td", {class: "clip"}, c.request.last_user), el("td", {class: "clip"}, answerSummary(c)));
  if (c.index === selectedCall) row.classList.add("selected");
  row.addEventListener("click", () => showCall(c.index).catch(showLoadError));
  return row;
}

async function showCall(index) {
  selectedCall = index;
  for (const row of $("j-table").tBodies[0].rows) row.classList.toggle("selected", row.dataset.index === String(index));
  const response = await call("calls/" + index);
  const detail = $("j-detail");
  const body = await response.json();
  detail.hidden = false;
  document.querySelector(".journal").classList.add("with-detail");
  if (!response.ok) {
    detail.replaceChildren(el("p", {class: "error"}, (body.error || {}).message || "HTTP " + response.status));
    return;
  }
  const caps = Object.entries(body.captures).map(([k, v]) => k + "=" + JSON.stringify(v)).join(", ");
  const replay = el("button", {type: "button", class: "primary", id: "j-replay"}, "Replay in the playground");
  replay.addEventListener("click", () => replayCall(body));
  detail.replaceChildren(
    el("h2", {}, "Call #" + body.index + " · rule " + body.rule),
    el("p", {class: "muted"}, body.api + " · " + body.model + " · answer seed " + body.seed + " · clock " +
      new Date(body.at * 1000).toISOString() + " · drawn in " + body.duration_ms.toFixed(2) + " ms" +
      (body.outcome ? " · outcome " + body.outcome +
        (body.frames_sent !== null && body.frames_sent !== undefined ? " (" + body.frames_sent + " frames sent)" : "")
        : "") +
      (caps ? " · captures " + caps : "")),
    replay,
    el("h3", {}, "Request"), el("pre", {}, json(body.neutral)),
    ...answerParts(body.answer));
}

function replayCall(detail) {
  $("pg-api").value = "neutral";
  fillExamples();
  $("pg-example").value = "";
  $("pg-request").value = json(detail.neutral);
  $("pg-seed").value = String(server.seed);
  showTab("playground");
  runPlayground({index: detail.index, rule: detail.rule, body: JSON.stringify(detail.answer.body)})
    .catch(showLoadError);
}

for (const id of ["j-rule", "j-model"]) $(id).addEventListener("input", () => loadJournal(true).catch(showLoadError));
for (const id of ["j-api", "j-status"]) $(id).addEventListener("change", () => loadJournal(true).catch(showLoadError));
$("j-refresh").addEventListener("click", () => loadJournal(true).catch(showLoadError));
$("j-clear").addEventListener("click", async () => {
  await call("calls", {method: "DELETE"});
  $("j-detail").hidden = true;
  document.querySelector(".journal").classList.remove("with-detail");
  await loadJournal(true);
});

setInterval(() => {
  if (!$("journal").hidden && $("j-live").checked) loadJournal(false).catch(showLoadError);
}, POLL_MS);

// ----------------------------------------------------------------------------------------------- rules

async function loadRules() {
  const response = await call("rules");
  const body = await response.json();
  server = body;
  const models = body.models.length ? " · models " + body.models.join(", ") : "";
  $("server-info").textContent = "seed " + body.seed + " · " + body.clock + " · " + body.rules.length + " rules" + models;
  $("r-table").tBodies[0].replaceChildren(...body.rules.map((r, i) => el("tr", {},
    el("td", {}, String(i + 1)), el("td", {}, r.name), el("td", {}, r.source || "Python"),
    el("td", {class: "data"}, r.match), el("td", {class: "data"}, r.answer +
      (r.error ? " · error " + r.error : "") + (r.stream ? " · stream " + JSON.stringify(r.stream) : "")),
    el("td", {}, r.times ? r.calls + " / " + r.times : String(r.calls)))));
  return body;
}

// ----------------------------------------------------------------------------------------------- start

async function start() {
  $("load-error").hidden = true;
  const body = await loadRules();
  const apis = $("pg-api");
  if (!apis.options.length) {
    apis.replaceChildren(...body.apis.map((a) => el("option", {value: a}, a)));
    $("j-api").append(...body.apis.filter((a) => a !== "neutral").map((a) => el("option", {value: a}, a)));
    fillExamples();
  }
  if ($("pg-seed").value === "") $("pg-seed").value = String(body.seed);
  if ($("pg-seed-b").value === "") $("pg-seed-b").value = String(body.seed + 1);
  const tab = location.hash.slice(1);
  showTab(["journal", "rules", "playground"].includes(tab) ? tab : "playground");
}

start().catch(showLoadError);
