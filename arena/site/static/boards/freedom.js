// Freedom: a size x size board of cells; board[r][c] is row r+1 (bottom first), column c.
"use strict";
(function () {
  const S = window.ArenaSvg, CELL = 40, PAD = 26;
  window.ArenaBoards.freedom = {
    marks(move) { return move && move !== "pass" ? [{at: move.toUpperCase(), kind: "to"}] : []; },
    draw(svg, wire, marks) {
      const n = wire.board.length, side = n * CELL;
      S.clear(svg, side + 2 * PAD, side + 2 * PAD);
      const x = (c) => PAD + c * CELL, y = (r) => PAD + (n - 1 - r) * CELL;
      S.el(svg, "rect", {class: "ground", x: PAD, y: PAD, width: side, height: side});
      for (let i = 0; i <= n; i++) {
        S.el(svg, "line", {class: "grid", x1: PAD, y1: PAD + i * CELL, x2: PAD + side, y2: PAD + i * CELL});
        S.el(svg, "line", {class: "grid", x1: PAD + i * CELL, y1: PAD, x2: PAD + i * CELL, y2: PAD + side});
      }
      for (let i = 0; i < n; i++) {
        S.el(svg, "text", {class: "coord", x: x(i) + CELL / 2, y: PAD - 8, "text-anchor": "middle"}, S.letters[i]);
        S.el(svg, "text", {class: "coord", x: x(i) + CELL / 2, y: PAD + side + 18, "text-anchor": "middle"}, S.letters[i]);
        S.el(svg, "text", {class: "coord", x: PAD / 2, y: y(i) + CELL / 2 + 5, "text-anchor": "middle"}, String(i + 1));
        S.el(svg, "text", {class: "coord", x: PAD + side + PAD / 2, y: y(i) + CELL / 2 + 5, "text-anchor": "middle"}, String(i + 1));
      }
      for (let r = 0; r < n; r++) {
        for (let c = 0; c < n; c++) {
          const ch = wire.board[r][c], at = S.letters[c] + (r + 1);
          for (const m of marks.filter((k) => k.at === at)) S.mark(svg, m, {x: x(c), y: y(r), w: CELL, h: CELL});
          if (ch === "W" || ch === "B") {
            S.el(svg, "circle", {class: `piece stone seat${ch === "W" ? 0 : 1}`, "data-piece": ch, "data-at": at,
              cx: x(c) + CELL / 2, cy: y(r) + CELL / 2, r: CELL * 0.38});
          }
        }
      }
    },
  };
})();
