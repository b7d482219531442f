// Every page: sortable tables, the games filter, and (under `arena serve`) live refresh.
"use strict";
(function () {
  // --- sorting: click a header; numbers compare as numbers, empty cells last ---
  for (const table of document.querySelectorAll("table.sortable")) {
    const heads = Array.from(table.tHead.rows[0].cells);
    heads.forEach((th, index) => {
      const button = th.querySelector("button");
      if (!button) return;
      button.addEventListener("click", () => {
        const ascending = th.getAttribute("aria-sort") === "descending";
        const numeric = th.dataset.type === "num";
        heads.forEach((h) => h.removeAttribute("aria-sort"));
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        const body = table.tBodies[0];
        const rows = Array.from(body.rows);
        const key = (row) => row.cells[index].dataset.sort ?? row.cells[index].textContent;
        rows.sort((a, b) => {
          const x = key(a), y = key(b);
          if (x === "" || y === "") return (x === "") - (y === "");
          const order = numeric ? Number(x) - Number(y) : x.localeCompare(y);
          return ascending ? order : -order;
        });
        for (const row of rows) body.appendChild(row);
      });
    });
  }

  // --- the games filter: by bot, by result, or by pairing (#pairing=a-vs-b from the crosstable) ---
  const games = document.getElementById("games");
  if (games) {
    const bot = document.getElementById("filter-bot");
    const res = document.getElementById("filter-result");
    const pairingBox = document.getElementById("pairing-filter");
    const shown = document.getElementById("shown");
    const params = () => new URLSearchParams(location.hash.slice(1));
    const apply = () => {
      const pairing = params().get("pairing") || "";
      pairingBox.hidden = !pairing;
      pairingBox.querySelector("b").textContent = pairing;
      let n = 0;
      for (const row of games.tBodies[0].rows) {
        const ok = (!pairing || row.dataset.pairing === pairing) &&
          (!bot.value || row.dataset.players.split(" ").includes(bot.value)) &&
          (!res.value || (res.value === "forfeit" ? row.dataset.forfeit === "1" : row.dataset.result === res.value));
        row.hidden = !ok;
        n += ok;
      }
      shown.textContent = `${n} of ${games.tBodies[0].rows.length} games`;
    };
    const fromHash = () => {
      const p = params();
      if (p.has("bot")) bot.value = p.get("bot");
      if (p.has("result")) res.value = p.get("result");
      apply();
    };
    bot.addEventListener("change", apply);
    res.addEventListener("change", apply);
    pairingBox.querySelector("a").addEventListener("click", (e) => {
      e.preventDefault();
      history.replaceState(null, "", location.pathname + location.search);
      apply();
    });
    window.addEventListener("hashchange", fromHash);
    fromHash();
  }

  // --- live: `arena serve` answers live.json; when its version changes, the page reloads ---
  if (document.body.dataset.live && window.ARENA_LIVE && /^https?:$/.test(location.protocol)) {
    const root = document.querySelector("link[rel=stylesheet]").getAttribute("href").replace("static/site.css", "");
    let seen = null;
    const poll = () => {
      fetch(`${root}live.json`, {cache: "no-store"})
        .then((r) => (r.ok ? r.json() : null))
        .then((state) => {
          if (!state) return;
          if (seen !== null && state.version !== seen) {
            sessionStorage.setItem("arena-scroll", String(window.scrollY));
            location.reload();
            return;
          }
          seen = state.version;
          setTimeout(poll, window.ARENA_LIVE.poll_ms || 2000);
        })
        .catch(() => setTimeout(poll, 5000));
    };
    const y = sessionStorage.getItem("arena-scroll");
    if (y !== null) { sessionStorage.removeItem("arena-scroll"); window.scrollTo(0, Number(y)); }
    poll();
  }
})();
