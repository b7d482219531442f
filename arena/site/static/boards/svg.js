// Shared by the board modules: SVG element creation, the move marks, and the registry the viewer reads.
// Each board module adds ArenaBoards[game] = {draw(svg, wire, marks, before), marks(move, before, after)}.
// A piece on the board is an element with class "piece", data-piece (what it is) and data-at
// (its cell in the game's notation), so a page can be checked against the wire state.
// A mark is {at, kind}: kind "from" (where the piece left), "to" (where it arrived or was placed),
// "via" (a Fanorona path's middle points), "build" (a Santorini build), "removed" (a Morris stone
// taken off) or "captured" (Fanorona stones taken); each kind has its own look (site.css).
"use strict";
window.ArenaBoards = window.ArenaBoards || {};
window.ArenaSvg = {
  NS: "http://www.w3.org/2000/svg",
  el(parent, tag, attrs, text) {
    const node = document.createElementNS(this.NS, tag);
    for (const [key, value] of Object.entries(attrs || {})) node.setAttribute(key, value);
    if (text !== undefined) node.textContent = text;
    parent.appendChild(node);
    return node;
  },
  clear(svg, width, height) {
    while (svg.firstChild) svg.removeChild(svg.firstChild);
    svg.setAttribute("viewBox", `0 0 ${width} ${height}`);
  },
  // one mark: around a point (cx, cy, r) or a cell (x, y, w, h); "removed" and "captured" are a cross
  mark(parent, m, shape) {
    const attrs = {class: `mark ${m.kind}`, "data-kind": m.kind, "data-at": m.at};
    let node;
    if (m.kind === "removed" || m.kind === "captured") {
      const cx = shape.cx ?? shape.x + shape.w / 2, cy = shape.cy ?? shape.y + shape.h / 2;
      const d = 0.55 * (shape.r ?? Math.min(shape.w, shape.h) / 2);
      node = this.el(parent, "path", {...attrs, d: `M${cx - d},${cy - d}L${cx + d},${cy + d}M${cx - d},${cy + d}L${cx + d},${cy - d}`});
    } else if (shape.r !== undefined) {
      node = this.el(parent, "circle", {...attrs, cx: shape.cx, cy: shape.cy, r: m.kind === "via" ? shape.r * 0.6 : shape.r});
    } else {
      const inset = m.kind === "build" ? 7 : 2;
      node = this.el(parent, "rect", {...attrs, x: shape.x + inset, y: shape.y + inset, rx: shape.rx || 0,
        width: shape.w - 2 * inset, height: shape.h - 2 * inset});
    }
    this.el(node, "title", {}, `${m.kind} ${m.at}`);
    return node;
  },
  // a stone just taken off the board, drawn faded where it stood (never a "piece": it is gone)
  ghost(parent, cls, at, cx, cy, r) {
    const node = this.el(parent, "circle", {class: `ghost ${cls}`, "data-at": at, cx, cy, r});
    this.el(node, "title", {}, `taken from ${at}`);
    return node;
  },
  letters: "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
};
