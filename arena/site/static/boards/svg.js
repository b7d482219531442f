// Shared by the board modules: SVG element creation, and the registry the viewer reads.
// Each board module adds ArenaBoards[game] = {draw(svg, wire, marks), marks(move, before)}.
// A piece on the board is an element with class "piece", data-piece (what it is) and data-at
// (its cell in the game's notation), so a page can be checked against the wire state.
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
  letters: "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
};
