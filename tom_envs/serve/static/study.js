// A participant's page: consent, instructions, games, surveys and the completion code, one step
// at a time, as the server says (GET /api/p/<id>; pushed over /ws/p/<id>). Every text is set with
// textContent. The participant's key comes from the link's fragment (#k=...), which is never
// sent to a server; it is kept in this tab's sessionStorage and sent in a header.
"use strict";
(() => {
  const $ = (id) => document.getElementById(id);
  const el = TomBoard.el;
  const pid = location.pathname.split("/").filter(Boolean).pop();
  const fromLink = new URLSearchParams(location.hash.slice(1)).get("k");
  if (fromLink) { sessionStorage.setItem(`key:${pid}`, fromLink); history.replaceState(null, "", location.pathname); }
  const key = sessionStorage.getItem(`key:${pid}`) || "";
  let state = null, shownAt = 0, busy = false, socket = null, retry = 500, countdown = null, dropped = false;

  async function call(path, body) {
    const opts = { headers: { "X-Participant-Key": key }, credentials: "same-origin" };
    if (body !== undefined) { opts.method = "POST"; opts.headers["Content-Type"] = "application/json"; opts.body = JSON.stringify(body); }
    $("saving").hidden = body === undefined;
    try {
      const r = await fetch(`/api/p/${encodeURIComponent(pid)}${path}`, opts);
      const data = await r.json();
      if (!r.ok) throw new Error(data.error || `error ${r.status}`);
      return data;
    } finally { $("saving").hidden = true; }
  }

  function paragraphs(text) {
    return text.split(/\n\s*\n/).filter((t) => t.trim()).map((t) => { const p = el("p"); p.textContent = t.trim(); return p; });
  }

  function button(text, onclick, cls) {
    const b = el("button", { type: "button", class: cls || "primary" });
    b.textContent = text;
    b.addEventListener("click", onclick);
    return b;
  }

  function error(msg) {
    const p = $("main").querySelector(".error") || $("main").appendChild(el("p", { class: "error" }));
    p.textContent = msg;
  }

  async function send(path, body) {
    if (busy) return;
    busy = true;
    try { render(await call(path, body)); } catch (e) { error(e.message); } finally { busy = false; }
    if (dropped) { dropped = false; try { render(await call("")); } catch (e) { error(e.message); } }
  }

  const stepPost = (extra) => send("/step", { step: state.step, ...extra });

  const VIEWS = {
    consent(s, main) {
      main.append(el("h2"), ...paragraphs(s.text));
      main.firstChild.textContent = "Before you start";
      const row = el("div", { class: "row" });
      row.append(button(s.agree, () => stepPost({ agree: true })), button(s.decline, () => stepPost({ agree: false }), "secondary"));
      main.append(row);
    },
    instructions(s, main) {
      const h = el("h2"); h.textContent = "Instructions";
      main.append(h, ...paragraphs(s.text), button("Continue", () => stepPost({})));
    },
    intro(s, main) {
      const h = el("h2"); h.textContent = `Next game: ${s.game}`;
      main.append(h, ...paragraphs(s.text));
      if (s.practice) { const p = el("p", { class: "hint" }); p.textContent = `You start with ${s.practice} practice round${s.practice > 1 ? "s" : ""}; they do not count.`; main.append(p); }
      main.append(button("Start", () => stepPost({})));
    },
    waiting(s, main) {
      const h = el("h2"); h.textContent = "Please wait";
      const p = el("p", { class: "waiting" }); p.textContent = s.text;
      const t = el("p", { id: "countdown", class: "hint" });
      main.append(h, p, t);
      let left = s.seconds_left;
      const tick = () => { t.textContent = left > 0 ? `At most about ${left} s more.` : ""; left -= 1; };
      tick();
      countdown = setInterval(tick, 1000);
    },
    play(s, main) { renderPlay(s, main); },
    survey(s, main) { renderSurvey(s, main); },
    done(s, main) {
      const h = el("h2"); h.textContent = "Thank you!";
      const code = el("p", { id: "code", class: "code" }); code.textContent = s.code;
      main.append(h, ...paragraphs(s.text), code, button("Copy the code", () => navigator.clipboard && navigator.clipboard.writeText(s.code), "secondary"));
    },
    declined(s, main) { main.append(...paragraphs(s.text)); },
    screened(s, main) { main.append(...paragraphs(s.text)); },
  };

  function renderPlay(s, main) {
    const b = s.board;
    const head = el("div", { class: "playhead" });
    const who = el("h2"); who.textContent = `${b.title}${s.practice ? " (practice)" : ""}: you are ${b.you}`;
    const turn = el("p", { id: "turn", class: b.your_turn ? "yours" : "theirs" });
    turn.textContent = b.status !== "playing" ? b.outcome
      : b.your_turn ? "Your turn: click on the board or choose below."
      : b.waiting_for.length ? `Waiting for ${b.waiting_for.join(" and ")}…` : "Waiting…";
    const line = el("p", { class: "headline" }); line.textContent = b.headline;
    head.append(who, line, turn);
    if (s.notice) { const n = el("p", { class: "notice" }); n.textContent = s.notice; head.append(n); }
    const parts = { board: el("div", { id: "board" }), legend: el("div", { id: "legend" }), panels: el("div", { id: "panels" }), actions: el("div", { id: "actions" }), chooser: el("div", { id: "chooser", class: "chooser" }) };
    const left = el("div", { class: "left" });
    left.append(parts.board, parts.chooser);
    const right = el("div", { class: "right" });
    const acts = el("section", { class: "panel" }); const ah = el("h3"); ah.textContent = b.your_turn ? "Your choices" : "Your choices (wait for your turn)"; acts.append(ah, parts.actions);
    right.append(acts);
    if (b.chat.on) right.append(chatBox(b));
    const lg = el("section", { class: "panel" }); const lh = el("h3"); lh.textContent = "What the board shows"; lg.append(lh, parts.legend);
    right.append(lg, parts.panels);
    const grid = el("div", { class: "play" }); grid.append(left, right);
    main.append(head, grid);
    if (b.your_turn && (state === null || state.kind !== "play" || state.board.step !== b.step || !state.board.your_turn)) shownAt = performance.now();
    TomBoard.render(parts, b, (id) => play(id));
    document.body.dataset.decision = String(b.step);
    document.body.dataset.turn = b.your_turn ? "yours" : "theirs";
    document.body.dataset.status = b.status;
  }

  function chatBox(b) {
    const box = el("section", { class: "panel chat" });
    const h = el("h3"); h.textContent = "Messages";
    const log = el("ul", { id: "chatlog" });
    for (const m of b.chat.log) { const li = el("li", { class: m.mine ? "mine" : "theirs" }); const w = el("b"); w.textContent = `${m.who}: `; li.append(w, document.createTextNode(m.text)); log.append(li); }
    if (!b.chat.log.length) { const li = el("li", { class: "hint" }); li.textContent = "No messages yet."; log.append(li); }
    const input = el("input", { id: "chat", maxlength: 2000, placeholder: b.chat.send_action !== null ? "Write to your team, then Send" : "Message to your team (sent with your next move)" });
    box.append(h, log, input);
    if (b.chat.send_action !== null) box.append(button("Send", () => play(b.chat.send_action), "secondary"));
    return box;
  }

  function renderSurvey(s, main) {
    const h = el("h2"); h.textContent = `A few questions about ${s.about}`;
    const form = el("form", { id: "survey" });
    form.addEventListener("submit", (e) => e.preventDefault());
    for (const item of s.items) {
      const fs = el("fieldset", { class: `item ${item.kind}` });
      const lg = el("legend"); lg.textContent = item.text + (item.required ? "" : " (optional)"); fs.append(lg);
      if (item.kind === "text") fs.append(el("textarea", { name: item.id, maxlength: item.max_chars, rows: 3 }));
      else {
        const opts = el("div", { class: item.kind === "likert" ? "scale" : "options" });
        item.options.forEach((o, i) => {
          const label = el("label"); const r = el("input", { type: "radio", name: item.id, value: o, id: `${item.id}-${i}` });
          const span = el("span"); span.textContent = o; label.append(r, span); opts.append(label);
        });
        fs.append(opts);
      }
      form.append(fs);
    }
    form.append(button("Submit", () => {
      const answers = {};
      for (const item of s.items) {
        if (item.kind === "text") answers[item.id] = form.elements[item.id].value;
        else { const c = form.querySelector(`input[name="${CSS.escape(item.id)}"]:checked`); if (c) answers[item.id] = c.value; }
      }
      stepPost({ answers });
    }));
    main.append(h, form);
  }

  function play(id) {
    if (busy || !state || state.kind !== "play" || !state.board.your_turn) return;
    const b = state.board;
    const body = { step: b.step, action: id, seconds: Math.round(performance.now() - shownAt) / 1000 };
    const chat = $("chat");
    if (chat && chat.value.trim()) { body.message = chat.value.trim(); }
    for (const btn of document.querySelectorAll("#actions button, #chooser button")) btn.disabled = true;
    send("/act", body).then(() => { if (chat && body.message && state.kind === "play" && state.board.step !== b.step) chat.value = ""; });
  }

  document.addEventListener("keydown", (e) => {
    if (!state || state.kind !== "play" || e.target.tagName === "INPUT" || e.target.tagName === "TEXTAREA") return;
    const id = state.board.keys && state.board.keys[e.key];
    if (id !== undefined && state.board.your_turn) { e.preventDefault(); play(id); }
  });

  function render(s) {
    if (countdown) { clearInterval(countdown); countdown = null; }
    const chat = $("chat");
    const draft = chat ? chat.value : "";
    $("title").textContent = s.title;
    document.title = s.title;
    $("progress").textContent = `step ${s.progress.step} of ${s.progress.of}`;
    const notice = s.kind === "play" ? "" : s.notice;
    $("notice").hidden = !notice;
    $("notice").textContent = notice || "";
    const main = $("main");
    main.replaceChildren();
    (VIEWS[s.kind] || ((x, m) => m.append(...paragraphs(`Unknown step ${x.kind}`))))(s, main);
    state = s;
    document.body.dataset.kind = s.kind;
    document.body.dataset.step = s.step || "";
    if ($("chat") && draft) $("chat").value = draft;
  }

  function connect() {
    const proto = location.protocol === "https:" ? "wss" : "ws";
    socket = new WebSocket(`${proto}://${location.host}/ws/p/${encodeURIComponent(pid)}`);
    socket.onopen = () => { retry = 500; socket.send(JSON.stringify({ key })); };
    socket.onmessage = (ev) => { if (busy) dropped = true; else render(JSON.parse(ev.data)); };
    socket.onclose = (ev) => {
      if (ev.code === 4401) { error("This link is incomplete: open the full link you were given."); return; }
      setTimeout(connect, retry);
      retry = Math.min(retry * 2, 10000);
    };
  }

  call("").then((s) => { render(s); connect(); }).catch((e) => error(e.message));
})();
