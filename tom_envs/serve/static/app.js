// The tom-envs player page: set up a session, then play over a websocket (HTTP as fallback).
const $ = (id) => document.getElementById(id);
let games = [], state = null, socket = null;
const params = new URLSearchParams(location.search);

function render(p) {
  state = p;
  $("setup").hidden = true;
  $("play").hidden = false;
  $("board").innerHTML = p.board;
  $("observation").textContent = p.observation;
  $("rules").textContent = p.rules;
  $("error").textContent = p.error || "";
  $("chatbox").hidden = !p.chat;
  const legal = $("legal");
  legal.innerHTML = "";
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
    fetch(`/api/sessions/${state.session}/act`, { method: "POST", body: JSON.stringify(body) })
      .then((r) => r.json()).then(render);
  }
}

function connect(sid) {
  socket = new WebSocket(`${location.protocol === "https:" ? "wss" : "ws"}://${location.host}/ws/${sid}`);
  socket.onmessage = (ev) => render(JSON.parse(ev.data));
  history.replaceState(null, "", `?session=${sid}` + (params.get("participant") ? `&participant=${params.get("participant")}` : ""));
}

function fillGame() {
  const g = games.find((x) => x.name === $("game").value);
  $("seat").innerHTML = [...Array(g.seats).keys()].map((s) => `<option value="${s}">player_${s}</option>`).join("");
  fillPartners();
}

function fillPartners() {
  const g = games.find((x) => x.name === $("game").value);
  const seat = Number($("seat").value);
  const box = $("partners");
  box.innerHTML = "";
  for (let s = 0; s < g.seats; s++) {
    if (s === seat) continue;
    const opts = g.agents.map((a) => `<option value="${a}">${a}</option>`).join("");
    box.insertAdjacentHTML("beforeend", `<label>player_${s} <select class="partner">${opts}</select></label>`);
  }
}

async function start() {
  const body = {
    game: $("game").value, seat: Number($("seat").value), seed: Number($("seed").value),
    partners: [...document.querySelectorAll(".partner")].map((x) => x.value),
  };
  try { body.kwargs = JSON.parse($("kwargs").value || "{}"); } catch { $("setup-error").textContent = "game arguments must be JSON"; return; }
  const r = await fetch("/api/sessions", { method: "POST", body: JSON.stringify(body) });
  const p = await r.json();
  if (!r.ok) { $("setup-error").textContent = p.error; return; }
  render(p);
  connect(p.session);
}

async function main() {
  if (params.get("session")) {
    const r = await fetch(`/api/sessions/${params.get("session")}`);
    if (r.ok) { render(await r.json()); connect(params.get("session")); return; }
  }
  if (params.get("participant") && params.get("task")) {
    const r = await fetch(`/api/study/${params.get("participant")}/${params.get("task")}`, { method: "POST" });
    const p = await r.json();
    if (r.ok) { render(p); connect(p.session); return; }
  }
  games = await (await fetch("/api/games")).json();
  $("game").innerHTML = games.map((g) => `<option value="${g.name}">${g.name}</option>`).join("");
  $("game").onchange = fillGame;
  $("seat").onchange = fillPartners;
  $("start").onclick = start;
  if (params.get("game")) $("game").value = params.get("game");
  fillGame();
}
main();
