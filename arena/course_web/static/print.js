// The defence sheet's Print button (no inline script: the pages' CSP allows this server's files only).
"use strict";
const printButton = document.getElementById("print-sheet");
if (printButton) printButton.addEventListener("click", () => window.print());
