// Nine Men's Morris: 24 points on three squares; board[i] is point i in the order below.
// A move is "d6" (placed), "d6-d5" (moved) and either with "xg7" (the stone taken off g7).
"use strict";
(function () {
  const S = window.ArenaSvg, STEP = 50, PAD = 30;
  const POINTS = ["a1", "d1", "g1", "b2", "d2", "f2", "c3", "d3", "e3", "a4", "b4", "c4",
                  "e4", "f4", "g4", "c5", "d5", "e5", "b6", "d6", "f6", "a7", "d7", "g7"];
  const LINES = [["a1", "g1"], ["b2", "f2"], ["c3", "e3"], ["a4", "c4"], ["e4", "g4"], ["c5", "e5"],
                 ["b6", "f6"], ["a7", "g7"], ["a1", "a7"], ["b2", "b6"], ["c3", "c5"], ["d1", "d3"],
                 ["d5", "d7"], ["e3", "e5"], ["f2", "f6"], ["g1", "g7"]];
  const px = (p) => PAD + ("abcdefg".indexOf(p[0])) * STEP;
  const py = (p) => PAD + (7 - Number(p[1])) * STEP;
  window.ArenaBoards.morris = {
    marks(move) {
      const m = /^([a-g][1-7])(?:-([a-g][1-7]))?(?:x([a-g][1-7]))?$/.exec((move || "").toLowerCase().replace(/\s+/g, ""));
      if (!m) return [];
      const out = m[2] ? [{at: m[1], kind: "from"}, {at: m[2], kind: "to"}] : [{at: m[1], kind: "to"}];
      if (m[3]) out.push({at: m[3], kind: "removed"});
      return out.filter((k) => POINTS.includes(k.at));
    },
    draw(svg, wire, marks, before) {
      const side = 6 * STEP;
      S.clear(svg, side + 2 * PAD, side + 2 * PAD + 30);
      S.el(svg, "rect", {class: "ground", x: PAD - 18, y: PAD - 18, width: side + 36, height: side + 36, rx: 8});
      for (const [a, b] of LINES) S.el(svg, "line", {class: "line", x1: px(a), y1: py(a), x2: px(b), y2: py(b)});
      for (let i = 0; i < 7; i++) {
        S.el(svg, "text", {class: "coord", x: PAD + i * STEP, y: PAD + side + 32, "text-anchor": "middle"}, "abcdefg"[i]);
        S.el(svg, "text", {class: "coord", x: 8, y: PAD + (6 - i) * STEP + 5, "text-anchor": "middle"}, String(i + 1));
      }
      POINTS.forEach((p, i) => {
        S.el(svg, "circle", {class: "point", cx: px(p), cy: py(p), r: 5});
        const ch = wire.board[i], was = before ? before.board[i] : ".";
        const here = marks.filter((k) => k.at === p);
        for (const m of here) if (m.kind !== "removed") S.mark(svg, m, {cx: px(p), cy: py(p), r: 21});
        if (ch === "W" || ch === "B") {
          S.el(svg, "circle", {class: `piece stone seat${ch === "W" ? 0 : 1}`, "data-piece": ch, "data-at": p,
            cx: px(p), cy: py(p), r: 16});
        } else if (here.some((k) => k.kind === "removed") && (was === "W" || was === "B")) {
          S.ghost(svg, `stone seat${was === "W" ? 0 : 1}`, p, px(p), py(p), 16);
        }
        for (const m of here) if (m.kind === "removed") S.mark(svg, m, {cx: px(p), cy: py(p), r: 21});
      });
      const hand = wire.in_hand || [0, 0];
      S.el(svg, "text", {class: "caption", x: PAD - 18, y: side + 2 * PAD + 26},
        `in hand: White ${hand[0]}, Black ${hand[1]}`);
    },
  };
})();
