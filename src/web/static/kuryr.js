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
// name them in that order; when one is left, or one names exactly the squares clicked, it is
// chosen and Play has the focus.
(() => {
  const board = document.getElementById("board");
  const select = document.getElementById("move");
  const play = document.getElementById("play-button");
  const clear = document.getElementById("clear");
  if (!board || !select || !play) return;
  const blank = select.options[0];
  const moves = Array.from(select.options).slice(1).map((option) => option.value);
  // The squares a text names, in order: a column letter and a row ("e4", also inside "KE4" or
  // "xD3"), a number (Backgammon's points), the bar or off. Piece letters, "x", "-" and "*"
  // are not squares.
  const squares = (text) => text.toLowerCase().match(/bar|off|[a-z]?[0-9]+/g) || [];
  const named = new Map(moves.map((move) => [move, squares(move)]));
  // Backgammon numbers its points from the mover's side: a drawing that numbers them for White
  // gives Black's numbers in data-square-black.
  const game = document.getElementById("game");
  const side = game ? game.getAttribute("data-side") : null;
  const squaresOf = (el) =>
    squares((side && el.getAttribute("data-square-" + side)) || el.getAttribute("data-square"));
  let chosen = [];
  let last = null;
  const fits = (move) => {
    let from = 0;
    const names = named.get(move);
    for (const square of chosen) {
      const at = names.indexOf(square, from);
      if (at < 0) return false;
      from = at + 1;
    }
    return true;
  };
  const exact = (move) => named.get(move).join(" ") === chosen.join(" ");
  const update = () => {
    board.querySelectorAll(".chosen").forEach((el) => el.classList.remove("chosen"));
    board.querySelectorAll("[data-square]").forEach((el) => {
      if (squaresOf(el).some((square) => chosen.includes(square))) el.classList.add("chosen");
    });
    const left = moves.filter(fits);
    select.replaceChildren(blank, ...left.map((move) => new Option(move, move)));
    const exactly = left.filter(exact);
    const pick = left.length === 1 ? left[0] : exactly.length === 1 ? exactly[0] : null;
    if (pick && chosen.length > 0) {
      select.value = pick;
      play.focus();
    } else {
      select.value = "";
    }
  };
  board.addEventListener("click", (event) => {
    const el = event.target.closest("[data-square]");
    if (!el) return;
    const clicked = squaresOf(el);
    // A piece over two squares (a barrier) is one click, however many of its squares are hit.
    const key = clicked.join(" ");
    if (key === last || clicked.length === 0) return;
    last = key;
    chosen.push(...clicked);
    if (!moves.some(fits)) chosen = clicked;
    if (!moves.some(fits)) {
      chosen = [];
      last = null;
    }
    update();
  });
  if (clear) {
    clear.hidden = false;
    clear.addEventListener("click", () => {
      chosen = [];
      last = null;
      update();
      select.focus();
    });
  }
})();

// A game's page follows the game: its public stream of events reloads the page when something
// happens, unless a move is being written (then once the field is left) or lines of a plan are
// not saved (then the planner says the game has moved). Without the stream, the page is checked
// once a minute.
(() => {
  const game = document.getElementById("game");
  if (!game || !window.fetch) return;
  const id = game.getAttribute("data-game");
  const ply = game.getAttribute("data-ply");
  // The game's own page: a refused form's answer came from a post, which a reload would resend.
  const page = "/games/" + encodeURIComponent(id);
  const lines = document.getElementById("lines");
  const unsaved = () =>
    !!lines && (lines.value !== lines.defaultValue || lines.hasAttribute("data-unsaved"));
  let pending = false;
  const typing = () => {
    const el = document.activeElement;
    return (el && (el.id === "typed" || el.id === "move") && el.value !== "") || unsaved();
  };
  const reload = () => {
    if (typing()) {
      if (unsaved() && !pending) game.dispatchEvent(new CustomEvent("kuryr:stale"));
      pending = true;
    } else if (window.location.pathname === page && !window.location.search) {
      window.location.reload();
    } else {
      // Without the query of a notice ("?plan=saved") that was about the page before.
      window.location.assign(page + window.location.hash);
    }
  };
  document.addEventListener("focusout", () => {
    if (pending) setTimeout(reload, 0);
  });
  let polling = false;
  const poll = () => {
    if (polling) return;
    polling = true;
    game.setAttribute("data-live", "poll");
    setInterval(() => {
      fetch(page, { credentials: "same-origin" })
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
  // data-live says how the page follows the game: "stream" while the stream is open, "poll"
  // once it has given up on it.
  stream.addEventListener("open", () => {
    failures = 0;
    game.setAttribute("data-live", "stream");
  });
  stream.addEventListener("error", () => {
    failures += 1;
    game.removeAttribute("data-live");
    if (stream.readyState === EventSource.CLOSED || failures > 3) {
      stream.close();
      poll();
    }
  });
})();
