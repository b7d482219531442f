// Fanorona: board[r][c] is row r+1 (bottom first), column c; diagonals through points with
// c + r even. A move is the path of one stone, "D2-D3" or "C1-C2-D2-D3" (A/W suffix optional);
// the stones it captures are the opponent's stones on the board before it and not after.
"use strict";
(function () {
  const S = window.ArenaSvg, STEP = 56, PAD = 40;
  const name = (r, c) => S.letters[c] + (r + 1);
  window.ArenaBoards.fanorona = {
    marks(move, before, after) {
      const path = (move || "").toUpperCase().split(/[-\s,]+/).map((p) => (/^([A-Z]\d+)[AW]?$/.exec(p) || [])[1]).filter(Boolean);
      const out = path.map((at, i) => ({at, kind: i === 0 ? "from" : i === path.length - 1 ? "to" : "via"}));
      if (before && after) {
        const theirs = before.seat === 0 ? "B" : "W";
        before.board.forEach((row, r) => {
          for (let c = 0; c < row.length; c++) {
            if (row[c] === theirs && after.board[r][c] !== theirs) out.push({at: name(r, c), kind: "captured"});
          }
        });
      }
      return out;
    },
    draw(svg, wire, marks, before) {
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
      const at = (p) => [S.letters.indexOf(p[0]), Number(p.slice(1)) - 1];
      const path = marks.filter((m) => m.kind !== "captured");
      if (path.length > 1) {
        S.el(svg, "polyline", {class: "path", points: path.map((m) => { const [c, r] = at(m.at); return `${x(c)},${y(r)}`; }).join(" ")});
      }
      for (const m of path) { const [c, r] = at(m.at); S.mark(svg, m, {cx: x(c), cy: y(r), r: 22}); }
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < cols; c++) {
          const ch = wire.board[r][c];
          if (ch === "W" || ch === "B") {
            S.el(svg, "circle", {class: `piece stone seat${ch === "W" ? 0 : 1}`, "data-piece": ch,
              "data-at": name(r, c), cx: x(c), cy: y(r), r: 17});
          }
        }
      }
      for (const m of marks.filter((k) => k.kind === "captured")) {  // the stones taken, leaving
        const [c, r] = at(m.at), was = before ? before.board[r][c] : "";
        if (was === "W" || was === "B") S.ghost(svg, `stone seat${was === "W" ? 0 : 1}`, m.at, x(c), y(r), 17);
        S.mark(svg, m, {cx: x(c), cy: y(r), r: 17});
      }
    },
  };
})();
