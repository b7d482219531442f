// The course server's pages: a submission's status updates in place while it builds and plays.
// The student's list polls /me/submissions.json, a submission's page its own status.json; both
// stop once every submission shown has its final status (qualified or failed).
"use strict";
(function () {
  const script = document.currentScript;
  const pollMs = Number(script.dataset.pollMs) || 1000;
  const states = JSON.parse(script.dataset.states);  // arena/course/db/states.py: the statuses' values
  const S = states.submission;
  const finished = (status) => states.finished.includes(status);
  const get = (url) => fetch(url, {cache: "no-store", credentials: "same-origin"})
    .then((r) => (r.ok ? r.json() : Promise.reject(new Error(`${url}: ${r.status}`))));

  function setStatus(span, status) {
    span.textContent = status;
    span.className = `status ${status}`;
  }

  function updateRow(row, s) {
    row.dataset.status = s.status;
    setStatus(row.querySelector(".status"), s.status);
    let reason = row.querySelector(".reason");
    if (!reason) {
      reason = document.createElement("span");
      reason.className = "reason";
      row.querySelector(".status").after(" ", reason);
    }
    reason.textContent = s.reason || "";
    const lastLine = row.querySelector(".last-line");
    lastLine.textContent = s.status === S.FAILED ? s.last_line : "";
    lastLine.hidden = !(s.status === S.FAILED && s.last_line);
    row.querySelector(".active-cell").innerHTML = s.active ? '<b class="active">active</b>' : "";
    const activate = row.querySelector("form.activate");
    if (activate) activate.hidden = !(s.status === S.QUALIFIED && !s.active);
  }

  function pollList(url) {
    get(url).then((body) => {
      const rows = new Map(Array.from(document.querySelectorAll("#submissions tr[data-id]"), (r) => [r.dataset.id, r]));
      if (body.submissions.some((s) => !rows.has(String(s.id)))) {  // one sent from elsewhere (the terminal)
        location.reload();
        return;
      }
      for (const s of body.submissions) updateRow(rows.get(String(s.id)), s);
      if (body.submissions.some((s) => !s.finished)) setTimeout(() => pollList(url), pollMs);
    }).catch(() => setTimeout(() => pollList(url), pollMs * 3));
  }

  function pollOne(url) {
    get(url).then((s) => {
      const state = document.getElementById("state");
      state.dataset.status = s.status;
      setStatus(document.getElementById("status"), s.status);
      document.getElementById("reason").textContent = s.reason || "";
      document.getElementById("active").hidden = !s.active;
      const lastLine = document.getElementById("last-line");
      lastLine.textContent = s.last_line;
      lastLine.hidden = !(s.status === S.FAILED && s.last_line);
      document.getElementById("detail").textContent = s.detail || "";
      document.getElementById("detail-box").hidden = !s.detail;
      document.getElementById("log").textContent = s.log || "(empty)";
      const games = document.getElementById("games");
      if (games.children.length !== s.games.length) {
        games.textContent = "";
        for (const g of s.games) {
          const li = document.createElement("li");
          const a = document.createElement("a");
          a.href = g.url;
          a.textContent = `game ${g.n}: ${g.players[0]} vs ${g.players[1]}`;
          const result = document.createElement("span");
          result.className = "result";
          result.textContent = g.result;
          const words = document.createElement("span");
          words.className = "muted";
          words.textContent = g.words;
          li.append(a, " ", result, " ", words);
          games.appendChild(li);
        }
        document.getElementById("no-games").hidden = s.games.length > 0;
      }
      if (s.status === S.FAILED && !s.games.length) {
        document.getElementById("no-games").textContent = `None: it failed before playing any (${s.reason}).`;
      }
      if (!s.finished) setTimeout(() => pollOne(url), pollMs);
    }).catch(() => setTimeout(() => pollOne(url), pollMs * 3));
  }

  if (script.dataset.statuses) {
    const unfinished = Array.from(document.querySelectorAll("#submissions tr[data-status]"))
      .some((row) => !finished(row.dataset.status));
    if (unfinished) setTimeout(() => pollList(script.dataset.statuses), pollMs);
  }
  if (script.dataset.submission) {
    const status = document.getElementById("state").dataset.status;
    if (!finished(status)) setTimeout(() => pollOne(script.dataset.submission), pollMs);
  }
})();
