// Fanorona: board[r][c] is row r+1 (bottom first), column c; diagonals through points with
// c + r even. A move is the path of one stone, "D2-D3" or "C1-C2-D2-D3" (A/W suffix optional).
"use strict";
(function () {
  const S = window.ArenaSvg, STEP = 56, PAD = 40;
  window.ArenaBoards.fanorona = {
    marks(move) {
      return (move || "").split("-").map((p) => (/^([A-Z]\d+)[AW]?$/.exec(p) || [])[1]).filter(Boolean);
    },
    draw(svg, wire, marks) {
      const rows = wire.board.length, cols = wire.board[0].length;
      S.clear(svg, (cols - 1) * STEP + 2 * PAD, (rows - 1) * STEP + 2 * PAD + 6);
      const x = (c) => PAD + c * STEP, y = (r) => PAD + (rows - 1 - r) * STEP;
      S.el(svg, "rect", {class: "ground", x: PAD - 26, y: PAD - 26, width: (cols - 1) * STEP + 52, height: (rows - 1) * STEP + 52, rx: 8});
      for (let r = 0; r < rows; r++) S.el(svg, "line", {class: "line", x1: x(0), y1: y(r), x2: x(cols - 1), y2: y(r)});
      for (let c = 0; c < cols; c++) S.el(svg, "line", {class: "line", x1: x(c), y1: y(0), x2: x(c), y2: y(rows - 1)});
      for (let r = 0; r < rows - 1; r++) {
        for (let c = 0; c < cols - 1; c++) {
          if ((r + c) % 2 === 0) S.el(svg, "line", {class: "line", x1: x(c), y1: y(r), x2: x(c + 1), y2: y(r + 1)});
          else S.el(svg, "line", {class: "line", x1: x(c + 1), y1: y(r), x2: x(c), y2: y(r + 1)});
        }
      }
      for (let c = 0; c < cols; c++) S.el(svg, "text", {class: "coord", x: x(c), y: y(0) + 38, "text-anchor": "middle"}, S.letters[c]);
      for (let r = 0; r < rows; r++) S.el(svg, "text", {class: "coord", x: 7, y: y(r) + 5, "text-anchor": "middle"}, String(r + 1));
      const at = (name) => [S.letters.indexOf(name[0]), Number(name.slice(1)) - 1];
      if (marks.length > 1) {
        S.el(svg, "polyline", {class: "path", points: marks.map((m) => { const [c, r] = at(m); return `${x(c)},${y(r)}`; }).join(" ")});
      }
      for (const m of marks) { const [c, r] = at(m); S.el(svg, "circle", {class: "mark", cx: x(c), cy: y(r), r: 22}); }
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < cols; c++) {
          const ch = wire.board[r][c];
          if (ch === "W" || ch === "B") {
            S.el(svg, "circle", {class: `piece stone seat${ch === "W" ? 0 : 1}`, "data-piece": ch,
              "data-at": S.letters[c] + (r + 1), cx: x(c), cy: y(r), r: 17});
          }
        }
      }
    },
  };
})();
