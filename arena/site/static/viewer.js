// The replay viewer of a game page: positions come from the page's embedded JSON (wire states
// computed at publish time), the board from ArenaBoards[game]; this file only navigates and shows.
// Moves are counted as people read them: move 1 is the first move, "start" the position before it.
"use strict";
(function () {
  const data = JSON.parse(document.getElementById("game-data").textContent);
  const board = window.ArenaBoards[data.game];
  const svg = document.getElementById("board");
  const slider = document.getElementById("slider");
  const label = document.getElementById("ply-label");
  const infoBox = document.getElementById("move-info");
  const list = document.getElementById("moves");
  const last = data.states.length - 1;
  const traces = data.traces || [];
  let ply = 0;
  // a seat's colour; Domineering's belongs to the orientation the seat plays
  const seatClass = (seat) => (board.seatClass ? board.seatClass(seat, data.params) : `seat${seat}`);
  for (const seat of [0, 1]) document.getElementById(`dot${seat}`).className = `dot ${seatClass(seat)}`;

  const text = (tag, content, cls) => {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (content !== undefined) node.textContent = content;
    return node;
  };
  const secs = (t) => (t < 0.01 ? `${(t * 1000).toFixed(1)} ms` : t < 1 ? `${(t * 1000).toFixed(0)} ms` : `${t.toFixed(2)} s`);
  const fmt = (v) => (typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toPrecision(4)) : String(v));

  // the move list, built once; a move on which the bot's code raised is marked "error"
  data.plies.forEach((p, i) => {
    if (i >= last) return;  // a move the rules refused (the replay stops before it)
    const li = text("li");
    const a = text("a");
    a.href = `#ply=${i + 1}`;
    a.dataset.ply = String(i + 1);
    a.appendChild(text("i", undefined, `dot ${seatClass(p.seat)}`));
    a.appendChild(text("span", p.move, "mv"));
    if (p.trace !== undefined) {
      a.classList.add("error");
      a.appendChild(text("span", "error", "err"));
    }
    a.appendChild(text("span", p.start ? "start" : secs(p.time_s), "t"));
    li.appendChild(a);
    list.appendChild(li);
  });

  // a block that may scroll must take the keyboard's focus (to scroll it without a mouse)
  const scrollable = (node) => { node.tabIndex = 0; return node; };

  // a traceback as a collapsible monospace block; its summary is the exception line
  function traceBlock(trace) {
    const details = text("details", undefined, "trace");
    const summary = text("summary", "traceback: ");
    summary.appendChild(text("span", trace.last, "mono"));
    if (trace.moves.length > 1) summary.appendChild(text("span", ` × ${trace.moves.length} moves`, "count"));
    details.appendChild(summary);
    details.appendChild(scrollable(text("pre", trace.text, "trace")));
    return details;
  }

  function showInfo(n, marks) {
    infoBox.textContent = "";
    const result = () => infoBox.appendChild(text("p", `Result ${data.result}: ${data.result_words}`, "final"));
    if (n === 0) {
      infoBox.appendChild(text("p", `Start: ${data.players[0]} (seat 0) against ${data.players[1]} (seat 1).`));
      if (last === 0) result();  // a game that ended before its first move (a forfeit)
      return;
    }
    const p = data.plies[n - 1];
    const who = data.players[p.seat];
    infoBox.appendChild(text("p", `Move ${n}: ${who} (seat ${p.seat}) played ${p.move}` +
      (p.start ? " (a start move)" : ` in ${secs(p.time_s)}` + (data.limit_s ? ` of ${secs(data.limit_s)}` : ""))));
    if (marks.length) {  // "from C3, to B3, build A3"; "to 3E 4E" (a domino); "captured D2 E2"
      const kinds = new Map();
      for (const m of marks) kinds.set(m.kind, [...(kinds.get(m.kind) || []), m.at]);
      infoBox.appendChild(text("p", Array.from(kinds, ([kind, cells]) => `${kind} ${cells.join(" ")}`).join(", "), "marks"));
    }
    if (!p.start && data.limit_s) {
      const bar = text("div", undefined, "timebar");
      const fill = text("span");
      const share = Math.min(1, p.time_s / data.limit_s);
      fill.style.width = `${(share * 100).toFixed(1)}%`;
      if (share >= 0.8) fill.className = "near";
      bar.appendChild(fill);
      bar.title = `${(share * 100).toFixed(0)}% of the limit`;
      infoBox.appendChild(bar);
    }
    if (p.trace !== undefined && traces[p.trace]) {
      infoBox.appendChild(text("p", `${who}'s code raised an error on this move:`, "warn"));
      infoBox.appendChild(traceBlock(traces[p.trace]));
    }
    const info = p.info || {};
    const dl = text("dl", undefined, "info");
    const add = (key, value) => {
      dl.appendChild(text("dt", key));
      const dd = text("dd");
      if (typeof value === "string" && value.includes("\n")) dd.appendChild(scrollable(text("pre", value, "trace")));
      else dd.textContent = value;
      dl.appendChild(dd);
    };
    for (const key of ["depth", "score", "nodes"]) if (key in info) add(key, fmt(info[key]));
    if (Array.isArray(info.pv) && info.pv.length) add("pv", info.pv.join(" "));
    if (Array.isArray(info.candidates) && info.candidates.length) {
      add("candidates", info.candidates.map((c) => `${c.move} ${c.score === null || c.score === undefined ? "?" : fmt(c.score)}`).join(", ") +
        (info["more candidates"] ? ` (+${info["more candidates"]} more)` : ""));
    }
    for (const [key, value] of Object.entries(info)) {
      if (!["depth", "score", "nodes", "pv", "candidates", "more candidates"].includes(key)) add(key, fmt(value));
    }
    if (dl.childNodes.length) infoBox.appendChild(dl);
    if (n === last) result();
  }

  // keep the current move visible inside the list, scrolling the list only: scrollIntoView would
  // scroll the page too, and on a phone carry the board out of view
  function reveal(item) {
    const box = list.getBoundingClientRect(), at = item.getBoundingClientRect();
    if (at.top < box.top) list.scrollTop -= box.top - at.top;
    else if (at.bottom > box.bottom) list.scrollTop += at.bottom - box.bottom;
  }

  function show(n) {
    ply = Math.max(0, Math.min(last, n));
    const before = ply > 0 ? data.states[ply - 1] : null;
    const move = ply > 0 ? data.plies[ply - 1].move : null;
    const marks = move ? board.marks(move, before, data.states[ply]) : [];
    board.draw(svg, data.states[ply], marks, before);
    svg.dataset.ply = String(ply);
    slider.value = String(ply);
    const opening = data.start_plies || 0;
    label.textContent = ply === 0 ? `start / ${last}`
      : ply === opening ? `after the opening (${opening} move${opening === 1 ? "" : "s"}) / ${last}`
      : `move ${ply} / ${last}`;
    for (const a of list.querySelectorAll("a")) a.classList.toggle("current", Number(a.dataset.ply) === ply);
    const current = list.querySelector("a.current");
    if (current) reveal(current);
    showInfo(ply, marks);
    const hash = `#ply=${ply}`;
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }

  function fromHash() {
    const m = /ply=(\d+)/.exec(location.hash);
    return m ? Number(m[1]) : 0;
  }

  document.getElementById("first").addEventListener("click", () => show(0));
  document.getElementById("prev").addEventListener("click", () => show(ply - 1));
  document.getElementById("next").addEventListener("click", () => show(ply + 1));
  document.getElementById("last").addEventListener("click", () => show(last));
  slider.addEventListener("input", () => show(Number(slider.value)));
  list.addEventListener("click", (e) => {
    const a = e.target.closest("a[data-ply]");
    if (a) { e.preventDefault(); show(Number(a.dataset.ply)); }
  });
  window.addEventListener("hashchange", () => show(fromHash()));
  document.addEventListener("keydown", (e) => {
    // the browser's own shortcuts (Alt+Left is Back, Ctrl/Cmd+arrows move the caret...) stay the
    // browser's, and so do the arrows in a form field or a scrolling traceback
    if (e.altKey || e.ctrlKey || e.metaKey || e.shiftKey || e.defaultPrevented) return;
    const target = e.target;
    if (target && target !== slider &&
        (["INPUT", "SELECT", "TEXTAREA", "PRE"].includes(target.tagName) || target.isContentEditable)) return;
    const keys = {ArrowLeft: () => show(ply - 1), ArrowRight: () => show(ply + 1), Home: () => show(0), End: () => show(last)};
    if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
  });
  // a ladder pair's replay opens on the position its paired opening set (data-open), not on an
  // empty board its bots never saw; a #ply= in the address wins
  const opensAfter = svg.dataset.open === "after-opening" && !/ply=\d+/.test(location.hash);
  show(opensAfter ? Math.min(last, data.start_plies || 0) : fromHash());
})();
