// Every page: sortable tables, the games list's filters (kept in the address), the whole name of a
// cut bot name on hover or focus, and (under `arena serve`) live updates in place.
"use strict";
(function () {
  // --- sorting: numbers compare as numbers, empty cells last ---
  const sorted = {};  // table id -> {key, ascending}: applied again when a live update brings new rows

  function sortTable(table, key, ascending) {
    const heads = Array.from(table.tHead.rows[0].cells);
    const index = heads.findIndex((h) => h.dataset.key === key);
    if (index < 0) return;
    const numeric = heads[index].dataset.type === "num";
    heads.forEach((h) => h.removeAttribute("aria-sort"));
    heads[index].setAttribute("aria-sort", ascending ? "ascending" : "descending");
    const body = table.tBodies[0];
    const cellKey = (row) => row.cells[index].dataset.sort ?? row.cells[index].textContent.trim();
    const rows = Array.from(body.rows);
    rows.sort((a, b) => {
      const x = cellKey(a), y = cellKey(b);
      if (x === "" || y === "") return (x === "") - (y === "");
      const order = numeric ? Number(x) - Number(y) : x.localeCompare(y);
      return ascending ? order : -order;
    });
    for (const row of rows) body.appendChild(row);
    sorted[table.id] = {key, ascending};
  }

  // a click on a column head: names A to Z and figures highest first (a rank: 1 first, its
  // data-first), a second click the other way (the games list: via its address)
  document.addEventListener("click", (e) => {
    const button = e.target.closest("table.sortable thead th button");
    if (!button) return;
    const th = button.closest("th"), table = button.closest("table");
    const current = th.getAttribute("aria-sort");
    const first = th.dataset.first || (th.dataset.type === "num" ? "descending" : "ascending");
    const ascending = current ? current === "descending" : first === "ascending";
    if (table.dataset.address) setAddress({sort: (ascending ? "" : "-") + th.dataset.key}, true);
    else sortTable(table, th.dataset.key, ascending);
  });

  function resort() {
    for (const [id, s] of Object.entries(sorted)) {
      const table = document.getElementById(id);
      if (table && !table.dataset.address) sortTable(table, s.key, s.ascending);
    }
  }

  // --- the games list: filters and sort in the address (#bot=..&result=..&pairing=..&sort=-plies) ---
  const params = () => new URLSearchParams(location.hash.slice(1));

  function setAddress(changes, push) {
    const p = params();
    for (const [k, v] of Object.entries(changes)) {
      if (v) p.set(k, v); else p.delete(k);
    }
    const hash = p.toString() ? `#${p.toString()}` : "";
    if (hash === location.hash || (!hash && !location.hash)) return;
    history[push ? "pushState" : "replaceState"](null, "", location.pathname + location.search + hash);
    fromAddress();
  }

  const gamesPage = document.getElementById("filters") && document.getElementById("games");
  const bot = document.getElementById("filter-bot");
  const res = document.getElementById("filter-result");
  const sortBox = document.getElementById("sort");

  function filterGames() {
    const games = document.getElementById("games");
    const p = params();
    const pairing = p.get("pairing") || "";
    const wanted = (p.get("bot") || "").trim().toLowerCase();
    const result = p.get("result") || "";
    const box = document.getElementById("pairing-filter");
    box.hidden = !pairing;
    box.querySelector("b").textContent = pairing;
    const names = Array.from(document.querySelectorAll("#bot-names option"), (o) => o.value.toLowerCase());
    const exact = names.includes(wanted);  // a whole name: that bot's games; else every name holding it
    let n = 0;
    for (const row of games.tBodies[0].rows) {
      const players = row.dataset.players.toLowerCase().split(" ");
      const ok = (!pairing || row.dataset.pairing === pairing) &&
        (!wanted || (exact ? players.includes(wanted) : players.some((x) => x.includes(wanted)))) &&
        (!result || (result === "forfeit" ? row.dataset.forfeit === "1" : row.dataset.result === result));
      row.hidden = !ok;
      n += ok;
    }
    document.getElementById("shown").textContent = `${n} of ${games.tBodies[0].rows.length} games shown`;
  }

  function fromAddress() {
    if (!gamesPage) return;
    const p = params();
    if (document.activeElement !== bot) bot.value = p.get("bot") || "";
    res.value = p.get("result") || "";
    const sort = p.get("sort") || "game";
    const key = sort.replace(/^-/, "");
    sortBox.value = Array.from(sortBox.options).some((o) => o.value === sort) ? sort : "game";
    sortTable(document.getElementById("games"), key, !sort.startsWith("-"));
    filterGames();
  }

  if (gamesPage) {
    let typing = false;  // one history entry for a search, not one a key
    bot.addEventListener("input", () => { setAddress({bot: bot.value}, !typing); typing = true; });
    bot.addEventListener("change", () => { setAddress({bot: bot.value}, !typing); typing = false; });
    res.addEventListener("change", () => setAddress({result: res.value}, true));
    sortBox.addEventListener("change", () => setAddress({sort: sortBox.value === "game" ? "" : sortBox.value}, true));
    document.getElementById("pairing-clear").addEventListener("click", () => setAddress({pairing: ""}, true));
    document.getElementById("filters").addEventListener("submit", (e) => e.preventDefault());
    window.addEventListener("hashchange", fromAddress);
    window.addEventListener("popstate", fromAddress);
    fromAddress();
  }

  // --- a cut name: the whole of it in a tip on hover and on keyboard focus ---
  let tip = null;
  const hideTip = () => { if (tip) { tip.remove(); tip = null; } };
  function showTip(e) {
    const name = e.target.closest && e.target.closest(".name");
    if (!name) return;
    hideTip();
    if (name.scrollWidth <= name.clientWidth) return;  // shown whole: no tip
    tip = document.createElement("div");
    tip.className = "name-tip";
    tip.setAttribute("role", "tooltip");
    tip.textContent = name.textContent;
    document.body.appendChild(tip);
    const r = name.getBoundingClientRect();
    const left = Math.max(4, Math.min(r.left, document.documentElement.clientWidth - tip.offsetWidth - 4));
    tip.style.left = `${left + window.scrollX}px`;
    tip.style.top = `${r.bottom + window.scrollY + 3}px`;
  }
  document.addEventListener("mouseover", showTip);
  document.addEventListener("focusin", showTip);
  document.addEventListener("mouseout", (e) => { if (e.target.closest && e.target.closest(".name")) hideTip(); });
  document.addEventListener("focusout", hideTip);
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") hideTip(); });
  window.addEventListener("scroll", hideTip, {passive: true});

  // --- live (`arena serve` answers live.json): new parts of this page put in place, games in progress drawn ---
  if (!(document.body.dataset.live && window.ARENA_LIVE && /^https?:$/.test(location.protocol))) return;
  const root = document.querySelector("link[rel=stylesheet]").getAttribute("href").replace("static/site.css", "");
  window.arenaLive = {updates: 0, polls: 0};

  function update() {
    return fetch(location.pathname + location.search, {cache: "no-store"})
      .then((r) => (r.ok ? r.text() : Promise.reject(new Error(String(r.status)))))
      .then((text) => {
        const fresh = new DOMParser().parseFromString(text, "text/html");
        const x = window.scrollX, y = window.scrollY;
        const boxes = {};
        for (const box of document.querySelectorAll(".scroll[id]")) boxes[box.id] = [box.scrollLeft, box.scrollTop];
        const focused = document.activeElement;
        const focusKey = focused && focused.closest("th[data-key]") ? focused.closest("th[data-key]").dataset.key : null;
        hideTip();
        for (const part of document.querySelectorAll("[data-live][id]")) {
          const next = fresh.getElementById(part.id);
          if (next) part.replaceWith(document.importNode(next, true));
        }
        document.title = fresh.title;
        resort();
        if (gamesPage) fromAddress();
        for (const [id, [left, top]] of Object.entries(boxes)) {
          const box = document.getElementById(id);
          if (box) { box.scrollLeft = left; box.scrollTop = top; }
        }
        window.scrollTo(x, y);
        if (focusKey) {
          const button = document.querySelector(`th[data-key="${focusKey}"] button`);
          if (button) button.focus({preventScroll: true});
        }
        window.arenaLive.updates += 1;
      });
  }

  const playingBox = document.getElementById("playing");
  const drawn = {};  // game id -> ply drawn

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function showPlaying(games) {
    if (!playingBox) return;
    document.getElementById("playing-now").hidden = !games.length;
    const ids = new Set(games.map((g) => g.game_id));
    for (const card of Array.from(playingBox.children)) {
      if (!ids.has(card.dataset.game)) { card.remove(); delete drawn[card.dataset.game]; }
    }
    for (const g of games) {
      let card = playingBox.querySelector(`[data-game="${CSS.escape(g.game_id)}"]`);
      if (card && drawn[g.game_id] === g.ply) continue;
      if (!card) {
        card = el("article", {class: "live-game", "data-game": g.game_id, "aria-label": `${g.game_id}, in progress`});
        const h = el("h3");
        g.players.forEach((p, seat) => {
          if (seat) h.appendChild(document.createTextNode(" vs "));
          h.appendChild(el("a", {class: "name", href: `${root}bots/${g.files[seat]}.html`}, p));
        });
        card.appendChild(h);
        card.appendChild(document.createElementNS("http://www.w3.org/2000/svg", "svg"));
        card.appendChild(el("p", {class: "live-ply"}));
        playingBox.appendChild(card);
      }
      const svg = card.querySelector("svg");
      const board = window.ArenaBoards && window.ArenaBoards[g.game];
      svg.setAttribute("class", `board ${g.game}`);
      svg.setAttribute("role", "img");
      svg.setAttribute("aria-label", `the board of ${g.game_id} after ply ${g.ply}`);
      svg.dataset.ply = String(g.ply);
      if (board) board.draw(svg, g.state, g.move && g.before ? board.marks(g.move, g.before) : []);
      card.querySelector(".live-ply").textContent =
        g.ply ? `ply ${g.ply}, last move ${g.move} · ${g.game_id}` : `about to start · ${g.game_id}`;
      drawn[g.game_id] = g.ply;
    }
  }

  let seen = typeof window.ARENA_LIVE.version === "number" ? window.ARENA_LIVE.version : null;
  let busy = false;
  const poll = () => {
    fetch(`${root}live.json`, {cache: "no-store"})
      .then((r) => (r.ok ? r.json() : null))
      .then((state) => {
        if (!state) return null;
        window.arenaLive.polls += 1;
        showPlaying(state.playing || []);
        if (seen === null || state.version === seen || busy) {
          if (seen === null) seen = state.version;
          return null;
        }
        busy = true;
        const version = state.version;
        return update().then(() => { seen = version; }).finally(() => { busy = false; });
      })
      .catch(() => null)
      .finally(() => setTimeout(poll, window.ARENA_LIVE.poll_ms || 2000));
  };
  poll();
})();
