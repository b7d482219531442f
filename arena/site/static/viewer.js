// The replay viewer of a game page: positions come from the page's embedded JSON (wire states
// computed at publish time), the board from ArenaBoards[game]; this file only navigates and shows.
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

  // the move list, built once
  data.plies.forEach((p, i) => {
    if (i >= last) return;  // a move the rules refused (the replay stops before it)
    const li = text("li");
    const a = text("a");
    a.href = `#ply=${i + 1}`;
    a.dataset.ply = String(i + 1);
    a.appendChild(text("i", undefined, `dot ${seatClass(p.seat)}`));
    a.appendChild(text("span", p.move, "mv"));
    a.appendChild(text("span", p.start ? "start" : secs(p.time_s), "t"));
    li.appendChild(a);
    list.appendChild(li);
  });

  function showInfo(n) {
    infoBox.textContent = "";
    const result = () => infoBox.appendChild(text("p", `Result ${data.result}: ${data.result_words}`, "final"));
    if (n === 0) {
      infoBox.appendChild(text("p", `Start: ${data.players[0]} (seat 0) against ${data.players[1]} (seat 1).`));
      if (last === 0) result();  // a game that ended before its first move (a forfeit)
      return;
    }
    const p = data.plies[n - 1];
    const who = data.players[p.seat];
    infoBox.appendChild(text("p", `Ply ${n}: ${who} (seat ${p.seat}) played ${p.move}` +
      (p.start ? " (a start move)" : ` in ${secs(p.time_s)}` + (data.limit_s ? ` of ${secs(data.limit_s)}` : ""))));
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
    const info = p.info || {};
    const dl = text("dl", undefined, "info");
    const add = (key, value) => { dl.appendChild(text("dt", key)); dl.appendChild(text("dd", value)); };
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

  function show(n) {
    ply = Math.max(0, Math.min(last, n));
    const before = ply > 0 ? data.states[ply - 1] : null;
    const move = ply > 0 ? data.plies[ply - 1].move : null;
    const marks = move ? board.marks(move, before) : [];
    board.draw(svg, data.states[ply], marks);
    svg.dataset.ply = String(ply);
    slider.value = String(ply);
    label.textContent = `ply ${ply} / ${last}`;
    for (const a of list.querySelectorAll("a")) a.classList.toggle("current", Number(a.dataset.ply) === ply);
    const current = list.querySelector("a.current");
    if (current && current.scrollIntoView) current.scrollIntoView({block: "nearest"});
    showInfo(ply);
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
    if (e.target && ["INPUT", "SELECT", "TEXTAREA"].includes(e.target.tagName) && e.target !== slider) return;
    const keys = {ArrowLeft: () => show(ply - 1), ArrowRight: () => show(ply + 1), Home: () => show(0), End: () => show(last)};
    if (keys[e.key]) { e.preventDefault(); keys[e.key](); }
  });
  show(fromHash());
})();
