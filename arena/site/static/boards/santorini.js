// Santorini: levels[r][c] is row "ABCDE"[r] (A on top), column c+1; 0-3 blocks, 4 a dome.
// workers[s] lists seat s's squares.
"use strict";
(function () {
  const S = window.ArenaSvg, CELL = 64, PAD = 26, ROWS = "ABCDE";
  window.ArenaBoards.santorini = {
    marks(move) { return (move || "").split(" ").filter((q) => /^[A-E][1-5]$/.test(q)); },
    draw(svg, wire, marks) {
      const side = 5 * CELL;
      S.clear(svg, side + 2 * PAD, side + 2 * PAD);
      const x = (c) => PAD + c * CELL, y = (r) => PAD + r * CELL;
      S.el(svg, "rect", {class: "ground", x: PAD, y: PAD, width: side, height: side});
      for (let i = 0; i < 5; i++) {
        S.el(svg, "text", {class: "coord", x: x(i) + CELL / 2, y: PAD - 8, "text-anchor": "middle"}, String(i + 1));
        S.el(svg, "text", {class: "coord", x: PAD / 2, y: y(i) + CELL / 2 + 5, "text-anchor": "middle"}, ROWS[i]);
      }
      for (let r = 0; r < 5; r++) {
        for (let c = 0; c < 5; c++) {
          const at = ROWS[r] + (c + 1), level = wire.levels[r][c];
          S.el(svg, "rect", {class: "cell", x: x(c), y: y(r), width: CELL, height: CELL});
          if (level > 0) {
            const g = S.el(svg, "g", {class: "piece tower", "data-piece": level === 4 ? "dome" : `level${level}`, "data-at": at});
            for (let k = 1; k <= Math.min(level, 3); k++) {
              const inset = 4 + (k - 1) * 8;
              S.el(g, "rect", {class: `block level${k}`, x: x(c) + inset, y: y(r) + inset,
                width: CELL - 2 * inset, height: CELL - 2 * inset, rx: 3});
            }
            if (level === 4) S.el(g, "circle", {class: "dome", cx: x(c) + CELL / 2, cy: y(r) + CELL / 2, r: CELL * 0.34});
            S.el(g, "text", {class: "level-label", x: x(c) + CELL - 6, y: y(r) + 14, "text-anchor": "end"}, String(Math.min(level, 3)));
          }
          if (marks.includes(at)) S.el(svg, "rect", {class: "mark", x: x(c) + 2, y: y(r) + 2, width: CELL - 4, height: CELL - 4});
        }
      }
      (wire.workers || []).forEach((squares, seat) => {
        for (const at of squares) {
          const r = ROWS.indexOf(at[0]), c = Number(at[1]) - 1;
          S.el(svg, "circle", {class: `piece worker seat${seat}`, "data-piece": `worker${seat}`, "data-at": at,
            cx: x(c) + CELL / 2, cy: y(r) + CELL / 2, r: CELL * 0.17});
        }
      });
    },
  };
})();
