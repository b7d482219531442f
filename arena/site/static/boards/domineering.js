// Domineering: board[r][c] is row r+1 (bottom first); X cells tile into vertical dominoes
// (runs split bottom-up in each column), O cells into horizontal ones (left to right in each row).
"use strict";
(function () {
  const S = window.ArenaSvg, CELL = 44, PAD = 26;
  window.ArenaBoards.domineering = {
    seatClass(seat, params) { return (seat === 0) === (params.first === "vertical") ? "vertical" : "horizontal"; },
    marks(move, before) {
      const m = /^(\d+)([A-Z])$/.exec(move || "");
      if (!m || !before) return [];
      const row = Number(m[1]), col = S.letters.indexOf(m[2]);
      const vertical = (before.seat === 0) === (before.params.first === "vertical");
      const cells = vertical ? [`${row}${m[2]}`, `${row + 1}${m[2]}`] : [`${row}${m[2]}`, `${row}${S.letters[col + 1]}`];
      return cells.map((at) => ({at, kind: "to"}));
    },
    draw(svg, wire, marks) {
      const rows = wire.board.length, cols = wire.board[0].length;
      S.clear(svg, cols * CELL + 2 * PAD, rows * CELL + 2 * PAD);
      const x = (c) => PAD + c * CELL, y = (r) => PAD + (rows - 1 - r) * CELL;
      S.el(svg, "rect", {class: "ground", x: PAD, y: PAD, width: cols * CELL, height: rows * CELL});
      for (let r = 0; r < rows; r++) {
        S.el(svg, "text", {class: "coord", x: PAD / 2, y: y(r) + CELL / 2 + 5, "text-anchor": "middle"}, String(r + 1));
        for (let c = 0; c < cols; c++) {
          S.el(svg, "rect", {class: "cell", x: x(c), y: y(r), width: CELL, height: CELL});
        }
      }
      for (let c = 0; c < cols; c++) {
        S.el(svg, "text", {class: "coord", x: x(c) + CELL / 2, y: PAD + rows * CELL + 18, "text-anchor": "middle"}, S.letters[c]);
      }
      const domino = (kind, r, c) => {
        const vertical = kind === "X", inset = 4;
        S.el(svg, "rect", {class: `piece domino ${kind === "X" ? "vertical" : "horizontal"}`,
          "data-piece": kind, "data-at": `${r + 1}${S.letters[c]}`, rx: 6,
          x: x(c) + inset, y: (vertical ? y(r + 1) : y(r)) + inset,
          width: (vertical ? CELL : 2 * CELL) - 2 * inset, height: (vertical ? 2 * CELL : CELL) - 2 * inset});
      };
      for (let c = 0; c < cols; c++) {
        for (let r = 0; r < rows; r++) {
          if (wire.board[r][c] === "X") { domino("X", r, c); r++; }
        }
      }
      for (let r = 0; r < rows; r++) {
        for (let c = 0; c < cols; c++) {
          if (wire.board[r][c] === "O") { domino("O", r, c); c++; }
        }
      }
      const cells = marks.map((m) => /^(\d+)([A-Z])$/.exec(m.at)).filter(Boolean)
        .map((m) => [Number(m[1]) - 1, S.letters.indexOf(m[2])]).filter(([r, c]) => r < rows && c >= 0 && c < cols);
      if (cells.length) {  // one outline around the domino just placed, named by its first cell
        const rs = cells.map(([r]) => r), cs = cells.map(([, c]) => c);
        const top = y(Math.max(...rs)), left = x(Math.min(...cs));
        S.mark(svg, {at: marks[0].at, kind: "to"}, {x: left - 1, y: top - 1, rx: 8,
          w: (Math.max(...cs) - Math.min(...cs) + 1) * CELL + 2, h: (Math.max(...rs) - Math.min(...rs) + 1) * CELL + 2});
      }
    },
  };
})();
