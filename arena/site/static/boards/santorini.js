// Santorini: levels[r][c] is row "ABCDE"[r] (A on top), column c+1; 0-3 blocks, 4 a dome (on
// three blocks). workers[s] lists seat s's squares. A move is "B2 C3" (placing both workers),
// "C3 B3 A3" (from, to, build) or "C3 B3" (a winning climb).
"use strict";
(function () {
  const S = window.ArenaSvg, CELL = 64, PAD = 26, ROWS = "ABCDE";
  window.ArenaBoards.santorini = {
    marks(move, before) {
      const squares = (move || "").toUpperCase().split(/[\s,-]+/).filter((q) => /^[A-E][1-5]$/.test(q));
      const placing = before ? !(before.workers[before.seat] || []).length : squares.length === 2;
      if (placing) return squares.map((at) => ({at, kind: "to"}));
      return squares.map((at, i) => ({at, kind: ["from", "to", "build"][i]}));
    },
    draw(svg, wire, marks) {
      const side = 5 * CELL;
      S.clear(svg, side + 2 * PAD, side + 2 * PAD);
      const defs = S.el(svg, "defs");
      const shade = S.el(defs, "radialGradient", {id: "dome-shade", cx: "0.38", cy: "0.35", r: "0.7"});
      S.el(shade, "stop", {offset: "0", "stop-color": "#9cc3ff"});
      S.el(shade, "stop", {offset: "0.55", "stop-color": "#3d74c9"});
      S.el(shade, "stop", {offset: "1", "stop-color": "#1d3f7a"});
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
            const dome = level === 4;
            const g = S.el(svg, "g", {class: "piece tower", "data-piece": dome ? "dome" : `level${level}`, "data-at": at});
            S.el(g, "title", {}, dome ? `${at}: a dome (on three blocks)` : `${at}: level ${level}`);
            for (let k = 1; k <= Math.min(level, 3); k++) {
              const inset = 4 + (k - 1) * 8;
              S.el(g, "rect", {class: `block level${k}`, x: x(c) + inset, y: y(r) + inset,
                width: CELL - 2 * inset, height: CELL - 2 * inset, rx: 3});
            }
            if (dome) {  // a dome seen from above: a shaded hemisphere with a highlight, no number
              const cx = x(c) + CELL / 2, cy = y(r) + CELL / 2, rad = CELL * 0.3;
              S.el(g, "circle", {class: "dome", cx, cy, r: rad, fill: "url(#dome-shade)"});
              S.el(g, "path", {class: "dome-shine", d: `M${cx - rad * 0.62},${cy - rad * 0.15} A${rad * 0.7},${rad * 0.7} 0 0 1 ${cx + rad * 0.1},${cy - rad * 0.66}`});
            } else {
              S.el(g, "text", {class: "level-label", x: x(c) + CELL - 6, y: y(r) + 14, "text-anchor": "end"}, String(level));
            }
          }
          for (const m of marks.filter((k) => k.at === at)) S.mark(svg, m, {x: x(c), y: y(r), w: CELL, h: CELL});
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
