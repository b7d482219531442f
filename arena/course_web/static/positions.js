// The course's season page: draws each position of `svg.position` (its wire form in data-wire)
// with the site's board for the game (static/boards/), beside the position's text form.
"use strict";
(function () {
  for (const svg of document.querySelectorAll("svg.position[data-wire]")) {
    const board = window.ArenaBoards && window.ArenaBoards[svg.dataset.game];
    if (!board) continue;
    try {
      board.draw(svg, JSON.parse(svg.dataset.wire), []);
      svg.dataset.drawn = "yes";
    } catch (e) {
      svg.remove();  // the text form beside it stays
    }
  }
})();
