// The researcher console: set up a session, then play over a websocket (HTTP as fallback).
// Everything the server or the URL supplies is put in the page as text (textContent, option
// elements), never as HTML: the participant's board is drawn element by element (board.js), the
// game's own board (an SVG) is shown as an image, where no script can run. The seat token
// returned at creation goes with every request about the session.
const $ = (id) => document.getElementById(id);
let games = [], state = null, socket = null, token = null;
const params = new URLSearchParams(location.search);
const JSON_HEADERS = { "Content-Type": "application/json" };

function post(url, body) {
  const headers = { ...JSON_HEADERS };
  if (token) headers["X-Seat-Token"] = token;
  return fetch(url, { method: "POST", headers, body: JSON.stringify(body || {}), credentials: "same-origin" });
}

function showBoard(svg) {
  const box = $("gameboard");
  box.replaceChildren();
  if (!svg) return;
  const img = document.createElement("img");
  img.alt = "board";
  img.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(svg);
  box.appendChild(img);
}

function render(p) {
  if (p.error && !p.session) { $("setup-error").textContent = p.error; return; }
  if (p.error && p.observation === undefined) {  // a refused move: the page stays as it is
    $("error").textContent = p.error;
    for (const b of document.querySelectorAll("#legal button")) b.disabled = false;
    return;
  }
  state = p;
  $("setup").hidden = true;
  $("play").hidden = false;
  showBoard(p.board);
  const parts = { board: $("board"), legend: $("legend"), panels: $("panels"), actions: $("actions"), chooser: $("chooser") };
  TomBoard.render(parts, p.participant, (id) => act(id));
  $("headline").textContent = p.participant.headline;
  $("observation").textContent = p.observation;
  $("rules").textContent = p.rules;
  $("error").textContent = p.error || "";
  $("chatbox").hidden = !p.chat;
  const legal = $("legal");
  legal.replaceChildren();
  for (const a of p.legal) {
    const b = document.createElement("button");
    b.className = "action";
    b.dataset.id = a.id;
    b.textContent = a.text;
    b.onclick = () => act(a.id);
    legal.appendChild(b);
  }
  const ret = Object.entries(p.returns).map(([k, v]) => `${k}: ${v}`).join(", ");
  const s = $("status");
  s.className = p.status;
  s.textContent = p.status === "playing"
    ? (p.your_turn ? `your turn (decision ${p.step})` : "waiting") + (ret ? ` — ${ret}` : "")
    : `episode ${p.status} — ${ret}`;
  $("task").textContent = p.task ? `task: ${p.task}` : "";
  document.body.dataset.status = p.status;
  document.body.dataset.step = p.step;
}

function act(id) {
  const body = { step: state.step, action: id };
  const msg = $("chat").value.trim();
  if (state.chat && msg) body.message = msg;
  $("chat").value = "";
  for (const b of document.querySelectorAll("#legal button")) b.disabled = true;
  if (socket && socket.readyState === WebSocket.OPEN) {
    socket.send(JSON.stringify(body));
  } else {
    post(`/api/sessions/${encodeURIComponent(state.session)}/act`, body)
      .then((r) => r.json()).then(render);
  }
}

function connect(sid) {
  const proto = location.protocol === "https:" ? "wss" : "ws";
  socket = new WebSocket(`${proto}://${location.host}/ws/${encodeURIComponent(sid)}?token=${encodeURIComponent(token)}`);
  socket.onmessage = (ev) => render(JSON.parse(ev.data));
  const keep = new URLSearchParams({ session: sid, token });
  for (const k of ["participant", "task"]) if (params.get(k)) keep.set(k, params.get(k));
  history.replaceState(null, "", "?" + keep.toString());
}

function option(value) {
  const o = document.createElement("option");
  o.value = value;
  o.textContent = value;
  return o;
}

function fillGame() {
  const g = games.find((x) => x.name === $("game").value);
  $("seat").replaceChildren(...[...Array(g.seats).keys()].map((s) => {
    const o = option(String(s));
    o.textContent = `player_${s}`;
    return o;
  }));
  fillPartners();
}

function fillPartners() {
  const g = games.find((x) => x.name === $("game").value);
  const seat = Number($("seat").value);
  const box = $("partners");
  box.replaceChildren();
  for (let s = 0; s < g.seats; s++) {
    if (s === seat) continue;
    const label = document.createElement("label");
    label.textContent = `player_${s} `;
    const select = document.createElement("select");
    select.className = "partner";
    select.append(...g.agents.map(option));
    label.appendChild(select);
    box.appendChild(label);
  }
}

function started(p) {
  token = p.token;
  render(p);
  connect(p.session);
}

async function start() {
  const body = {
    game: $("game").value, seat: Number($("seat").value), seed: Number($("seed").value),
    partners: [...document.querySelectorAll(".partner")].map((x) => x.value),
  };
  try { body.kwargs = JSON.parse($("kwargs").value || "{}"); } catch { $("setup-error").textContent = "game arguments must be JSON"; return; }
  const r = await post("/api/sessions", body);
  const p = await r.json();
  if (!r.ok) { $("setup-error").textContent = p.error; return; }
  started(p);
}

async function main() {
  if (params.get("session") && params.get("token")) {
    token = params.get("token");
    const r = await fetch(`/api/sessions/${encodeURIComponent(params.get("session"))}`,
      { headers: { "X-Seat-Token": token }, credentials: "same-origin" });
    if (r.ok) { render(await r.json()); connect(params.get("session")); return; }
    token = null;
  }
  if (params.get("participant") && params.get("task")) {
    const url = `/api/study/${encodeURIComponent(params.get("participant"))}/${encodeURIComponent(params.get("task"))}`;
    const r = await post(url, {});
    const p = await r.json();
    if (r.ok) { started(p); return; }
    $("setup-error").textContent = p.error;
  }
  games = await (await fetch("/api/games", { credentials: "same-origin" })).json();
  $("game").replaceChildren(...games.map((g) => option(g.name)));
  $("game").onchange = fillGame;
  $("seat").onchange = fillPartners;
  $("start").onclick = start;
  if (params.get("game")) $("game").value = params.get("game");
  fillGame();
}
main();
