// Draws a participant board (the JSON of tom_envs/serve/boards) and its action buttons.
// Every element is created with createElement(NS) and every text set with textContent: nothing
// from the server or a player is ever parsed as HTML, so no payload can run as script.
"use strict";
const TomBoard = (() => {
  const SVGNS = "http://www.w3.org/2000/svg";
  const ATTRS = {
    rect: (s) => ({ x: s.x, y: s.y, width: s.w, height: s.h, rx: s.rx ?? 3 }),
    circle: (s) => ({ cx: s.x, cy: s.y, r: s.r }),
    line: (s) => ({ x1: s.x1, y1: s.y1, x2: s.x2, y2: s.y2 }),
    poly: (s) => ({ points: s.points.map((p) => p.join(",")).join(" ") }),
    text: (s) => ({ x: s.x, y: s.y, "font-size": s.size, "text-anchor": s.anchor === "middle" ? "middle" : s.anchor === "end" ? "end" : "start" }),
  };
  const TAG = { rect: "rect", circle: "circle", line: "line", poly: "polygon", text: "text" };

  function el(tag, attrs, ns) {
    const e = ns ? document.createElementNS(SVGNS, tag) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null && v !== "") e.setAttribute(k, String(v));
    return e;
  }

  function shape(s, handlers) {
    const e = el(TAG[s.k], ATTRS[s.k](s), true);
    if (s.k === "text") {
      e.textContent = s.text;
      e.setAttribute("fill", s.fill || "#111");
      if (s.bold) e.setAttribute("font-weight", "bold");
      e.setAttribute("font-family", "sans-serif");
    } else {
      e.setAttribute("fill", s.k === "line" ? "none" : (s.fill || "none"));
      e.setAttribute("stroke", s.stroke || "#333");
      e.setAttribute("stroke-width", String(s.sw ?? 1));
      if (s.dash) e.setAttribute("stroke-dasharray", s.dash);
      if (s.arrow) e.setAttribute("marker-end", "url(#arrow)");
    }
    if (s.tip) { const t = el("title", {}, true); t.textContent = s.tip; e.appendChild(t); }
    if (s.act && s.act.length) {
      e.classList.add("clickable");
      e.dataset.act = s.act.join(" ");
      e.addEventListener("click", () => handlers.act(s.act, s.tip || ""));
    }
    if (s.sel) {
      e.classList.add("selectable");
      e.dataset.sel = s.sel;
      e.addEventListener("click", () => handlers.select(s.sel));
    }
    return e;
  }

  function drawBoard(box, board, handlers, picked) {
    const svg = el("svg", { viewBox: `0 0 ${board.w} ${board.h}`, width: board.w, height: board.h, class: "board" }, true);
    const defs = el("defs", {}, true);
    const marker = el("marker", { id: "arrow", viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, true);
    marker.appendChild(el("path", { d: "M 0 0 L 10 5 L 0 10 z", fill: "#666" }, true));
    defs.appendChild(marker);
    svg.appendChild(defs);
    for (const s of board.shapes) {
      const e = shape(s, handlers);
      if (s.sel && picked.has(s.sel)) e.classList.add("picked");
      svg.appendChild(e);
    }
    box.replaceChildren(svg);
  }

  function swatch(entry) {
    const svg = el("svg", { width: 26, height: 20, viewBox: "0 0 26 20", class: "swatch" }, true);
    let e;
    if (entry.shape === "line") e = el("line", { x1: 2, y1: 10, x2: 24, y2: 10, stroke: entry.stroke, "stroke-width": 3, "stroke-dasharray": entry.dash }, true);
    else if (entry.shape === "rect") e = el("rect", { x: 3, y: 2, width: 20, height: 16, rx: 2, fill: entry.fill, stroke: entry.stroke, "stroke-dasharray": entry.dash, "stroke-width": entry.dash ? 2 : 1 }, true);
    else e = el("circle", { cx: 13, cy: 10, r: 8, fill: entry.fill, stroke: entry.stroke }, true);
    svg.appendChild(e);
    if (entry.letter) {
      const t = el("text", { x: 13, y: 14, "font-size": 10, "text-anchor": "middle", fill: "#fff", "font-weight": "bold", "font-family": "sans-serif" }, true);
      t.textContent = entry.letter;
      svg.appendChild(t);
    }
    return svg;
  }

  function drawLegend(box, legend) {
    const ul = el("ul", { class: "legend" });
    for (const entry of legend) {
      const li = el("li");
      li.appendChild(swatch(entry));
      const span = el("span");
      span.textContent = entry.text;
      li.appendChild(span);
      ul.appendChild(li);
    }
    box.replaceChildren(ul);
  }

  function drawPanels(box, panels) {
    const out = [];
    for (const p of panels) {
      const sec = el("section", { class: "panel" });
      const h = el("h3");
      h.textContent = p.title;
      sec.appendChild(h);
      const ul = el("ul");
      for (const line of p.lines) { const li = el("li"); li.textContent = line; ul.appendChild(li); }
      sec.appendChild(ul);
      out.push(sec);
    }
    box.replaceChildren(...out);
  }

  function faceCounts(list) {
    const m = new Map();
    for (const f of list) m.set(f, (m.get(f) || 0) + 1);
    return m;
  }

  // Buttons for the legal actions, grouped; in selection games only those using the picked cards.
  function drawActions(box, data, handlers, picked) {
    let actions = data.actions;
    if (data.select && picked.size) {
      const want = faceCounts([...picked].map((s) => s.split(":")[0]));
      actions = actions.filter((a) => {
        const have = faceCounts(a.faces || []);
        for (const [f, n] of want) if ((have.get(f) || 0) < n) return false;
        return true;
      });
    }
    const groups = new Map();
    for (const a of actions) { if (!groups.has(a.group)) groups.set(a.group, []); groups.get(a.group).push(a); }
    const out = [];
    for (const [group, list] of groups) {
      const holder = group && list.length > 8 ? el("details") : el("div", { class: "group" });
      if (group) {
        const title = el(holder.tagName === "DETAILS" ? "summary" : "h4");
        title.textContent = holder.tagName === "DETAILS" ? `${group} (${list.length})` : group;
        holder.appendChild(title);
      }
      for (const a of list) {
        const b = el("button", { class: "action", type: "button" });
        b.dataset.id = String(a.id);
        b.textContent = a.label;
        b.addEventListener("click", () => handlers.play(a.id));
        holder.appendChild(b);
      }
      out.push(holder);
    }
    if (data.select && picked.size && !actions.length) {
      const p = el("p", { class: "hint" });
      p.textContent = "No play uses exactly these cards: pick other cards, or clear the selection.";
      out.push(p);
    }
    box.replaceChildren(...out);
  }

  // A small menu when a click on the board offers several actions.
  function choose(box, ids, data, tip, play) {
    const labels = new Map(data.actions.map((a) => [a.id, a.label]));
    const items = [];
    const h = el("p", { class: "chooser-title" });
    h.textContent = tip ? `${tip}:` : "Choose:";
    items.push(h);
    for (const id of ids) {
      const b = el("button", { class: "choice", type: "button" });
      b.dataset.id = String(id);
      b.textContent = labels.get(id) || `action ${id}`;
      b.addEventListener("click", () => { box.hidden = true; play(id); });
      items.push(b);
    }
    const cancel = el("button", { class: "cancel", type: "button" });
    cancel.textContent = "Cancel";
    cancel.addEventListener("click", () => { box.hidden = true; });
    items.push(cancel);
    box.replaceChildren(...items);
    box.hidden = false;
  }

  // Render everything into the elements of `parts` ({board, legend, panels, actions, chooser}).
  function render(parts, data, play) {
    const picked = new Set();
    const handlers = {
      play,
      act: (ids, tip) => (ids.length === 1 ? play(ids[0]) : choose(parts.chooser, ids, data, tip, play)),
      select: (sel) => {
        if (picked.has(sel)) picked.delete(sel); else picked.add(sel);
        drawBoard(parts.board, data.board, handlers, picked);
        drawActions(parts.actions, data, handlers, picked);
      },
    };
    parts.chooser.hidden = true;
    drawBoard(parts.board, data.board, handlers, picked);
    drawLegend(parts.legend, data.legend);
    drawPanels(parts.panels, data.panels);
    drawActions(parts.actions, data, handlers, picked);
  }

  return { render, el };
})();
