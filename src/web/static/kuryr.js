// Kuryr's web client works without this script; it only makes pages nicer (docs/web.md).
"use strict";

// A button that asks first: a form with data-confirm is sent only once confirmed.
document.addEventListener("submit", (event) => {
  const question = event.target.getAttribute("data-confirm");
  if (question && !window.confirm(question)) {
    event.preventDefault();
  }
});
