// Kuryr's web client works without this script; it only makes pages nicer (docs/web.md).
"use strict";

// A button that asks first: a form with data-confirm is sent only once confirmed.
document.addEventListener("submit", (event) => {
  const question = event.target.getAttribute("data-confirm");
  if (question && !window.confirm(question)) {
    event.preventDefault();
  } else if (question) {
    // Confirmed in the dialog: the form's own "yes" box (there for browsers without this
    // script) says so too.
    const box = event.target.querySelector("input[type=checkbox][name=confirm]");
    if (box) box.checked = true;
  }
});

// The new challenge form: only the chosen game's options are shown and sent.
(() => {
  const game = document.querySelector("select[data-options-for]");
  if (!game) return;
  const sets = document.querySelectorAll("fieldset.options[data-game]");
  const show = () => {
    sets.forEach((set) => {
      const mine = set.getAttribute("data-game") === game.value;
      set.hidden = !mine;
      set.disabled = !mine;
    });
  };
  game.addEventListener("change", show);
  show();
})();

// Click to move: the squares clicked on the board narrow the list of legal moves to those that
// name them in that order; when one is left, it is chosen and Play has the focus.
(() => {
  const board = document.getElementById("board");
  const select = document.getElementById("move");
  const play = document.getElementById("play-button");
  const clear = document.getElementById("clear");
  if (!board || !select || !play) return;
  const blank = select.options[0];
  const moves = Array.from(select.options).slice(1).map((option) => option.value);
  let chosen = [];
  // Whether `move` names the squares in order, each as a whole word.
  const fits = (move, squares) => {
    const text = move.toLowerCase();
    let from = 0;
    for (const square of squares) {
      let at = text.indexOf(square, from);
      const word = (i) => i >= 0 && i < text.length && /[a-z0-9]/.test(text[i]);
      while (at >= 0 && (word(at - 1) || word(at + square.length))) {
        at = text.indexOf(square, at + 1);
      }
      if (at < 0) return false;
      from = at + square.length;
    }
    return true;
  };
  const update = () => {
    board.querySelectorAll(".chosen").forEach((el) => el.classList.remove("chosen"));
    chosen.forEach((square) => {
      board.querySelectorAll("[data-square]").forEach((el) => {
        if (el.getAttribute("data-square").toLowerCase().split(/[^a-z0-9]+/)[0] === square) {
          el.classList.add("chosen");
        }
      });
    });
    const left = moves.filter((move) => fits(move, chosen));
    select.replaceChildren(blank, ...left.map((move) => new Option(move, move)));
    if (left.length === 1 && chosen.length > 0) {
      select.value = left[0];
      play.focus();
    } else {
      select.value = "";
    }
  };
  board.addEventListener("click", (event) => {
    const el = event.target.closest("[data-square]");
    if (!el) return;
    const square = el.getAttribute("data-square").toLowerCase().split(/[^a-z0-9]+/)[0];
    if (chosen[chosen.length - 1] === square) return;
    chosen.push(square);
    if (!moves.some((move) => fits(move, chosen))) chosen = [square];
    if (!moves.some((move) => fits(move, chosen))) chosen = [];
    update();
  });
  if (clear) {
    clear.hidden = false;
    clear.addEventListener("click", () => {
      chosen = [];
      update();
      select.focus();
    });
  }
})();

// A game's page follows the game: its public stream of events reloads the page when something
// happens, unless a move is being written (then once the field is left). Without the stream, the
// page is checked once a minute.
(() => {
  const game = document.getElementById("game");
  if (!game || !window.fetch) return;
  const id = game.getAttribute("data-game");
  const ply = game.getAttribute("data-ply");
  let pending = false;
  const typing = () => {
    const el = document.activeElement;
    return el && (el.id === "typed" || el.id === "move") && el.value !== "";
  };
  const reload = () => {
    if (typing()) {
      pending = true;
    } else {
      window.location.reload();
    }
  };
  document.addEventListener("focusout", () => {
    if (pending) setTimeout(reload, 0);
  });
  let polling = false;
  const poll = () => {
    if (polling) return;
    polling = true;
    setInterval(() => {
      fetch(window.location.pathname, { credentials: "same-origin" })
        .then((response) => (response.ok ? response.text() : ""))
        .then((html) => {
          const doc = new DOMParser().parseFromString(html, "text/html");
          const fresh = doc.getElementById("game");
          if (fresh && fresh.getAttribute("data-ply") !== ply) reload();
        })
        .catch(() => {});
    }, 60000);
  };
  if (!window.EventSource) {
    poll();
    return;
  }
  const stream = new EventSource("/api/v1/games/" + encodeURIComponent(id) + "/events");
  let failures = 0;
  ["game.move", "game.over", "game.draw_offered", "game.draw_accepted", "game.draw_declined"]
    .forEach((kind) => stream.addEventListener(kind, reload));
  stream.addEventListener("open", () => {
    failures = 0;
  });
  stream.addEventListener("error", () => {
    failures += 1;
    if (stream.readyState === EventSource.CLOSED || failures > 3) {
      stream.close();
      poll();
    }
  });
})();
