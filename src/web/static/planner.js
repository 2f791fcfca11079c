// The planner of conditional moves (docs/web.md), on a game page where the player waits for
// their opponent: a board to build lines on by clicks. Only an aid: the box of lines (#lines) is
// what the form sends, and the page works without this script.
"use strict";
(() => {
  const planner = document.getElementById("planner");
  const box = document.getElementById("lines");
  if (!planner || !box || !window.fetch || !window.DOMParser) return;
  const start = planner.getAttribute("data-position");
  const optionsText = planner.getAttribute("data-options") || "{}";
  let options;
  try {
    options = JSON.parse(optionsText);
  } catch (e) {
    return;
  }
  const api = "/api/v1/rules/" + encodeURIComponent(planner.getAttribute("data-kind"));
  const board = document.getElementById("plan-board");
  const status = document.getElementById("plan-status");
  const choices = document.getElementById("plan-choices");
  const undo = document.getElementById("plan-undo");
  const fresh = document.getElementById("plan-new");

  // The squares a move names, as kuryr.js reads them: a column letter and a row ("e4", also
  // inside "KE4" or "C2D2-B2C2"), a number, the bar or off.
  const squares = (text) => (text || "").toLowerCase().match(/bar|off|[a-z]?[0-9]+/g) || [];

  // Each position's board and legal moves, from the server's stateless rules endpoints, asked
  // for once.
  const known = new Map();
  const ok = (response) => {
    if (!response.ok) throw new Error(response.status);
    return response;
  };
  const load = (position) => {
    if (!known.has(position)) {
      const moves = fetch(api + "/moves", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ position, options }),
      })
        .then(ok)
        .then((response) => response.json());
      const query =
        "?position=" + encodeURIComponent(position) + "&options=" + encodeURIComponent(optionsText);
      const svg = fetch(api + "/board.svg" + query)
        .then(ok)
        .then((response) => response.text());
      const both = Promise.all([moves, svg]).then(([found, picture]) => ({
        moves: found.moves.map((m) => ({ move: m.move, position: m.position, names: squares(m.move) })),
        over: !!found.outcome,
        svg: picture,
      }));
      known.set(position, both);
      both.catch(() => known.delete(position));
    }
    return known.get(position);
  };

  // The board drawn inline, so that its squares can be clicked; its ids are made its own (the
  // game's board above has the same).
  const draw = (text) => {
    const svg = new DOMParser().parseFromString(text, "image/svg+xml").documentElement;
    if (!svg || svg.nodeName !== "svg") throw new Error("not a board");
    svg.querySelectorAll("[id]").forEach((el) => {
      el.id = "plan-" + el.id;
    });
    const labels = svg.getAttribute("aria-labelledby");
    if (labels) svg.setAttribute("aria-labelledby", labels.replace(/(\S+)/g, "plan-$1"));
    board.replaceChildren(document.importNode(svg, true));
  };

  let line = []; // the line being built: [{move, position}]
  let before = null; // the box's text before this line's row; null until the line has a move
  let here = null; // the legal moves at the end of the line, once loaded
  let chosen = []; // the squares clicked towards the next move
  let last = null;
  let clicks = 0;
  let asked = 0;

  // The line is the last row of the box, rewritten as it grows or shrinks.
  const write = () => {
    if (before === null) before = box.value.replace(/\s+$/, "");
    const row = line.map((step) => step.move).join(" ");
    box.value = row === "" ? before : before === "" ? row : before + "\n" + row;
    planner.setAttribute("data-line", row);
  };

  const fits = (names) => {
    let from = 0;
    for (const square of chosen) {
      const at = names.indexOf(square, from);
      if (at < 0) return false;
      from = at + 1;
    }
    return true;
  };
  const left = () => (here ? here.moves.filter((m) => fits(m.names)) : []);

  const render = () => {
    board.querySelectorAll(".chosen").forEach((el) => el.classList.remove("chosen"));
    board.querySelectorAll("[data-square]").forEach((el) => {
      if (squares(el.getAttribute("data-square")).some((s) => chosen.includes(s))) {
        el.classList.add("chosen");
      }
    });
    choices.replaceChildren(
      ...left().map((m) => {
        const button = document.createElement("button");
        button.type = "button";
        button.className = "secondary";
        button.textContent = m.move;
        button.setAttribute("data-move", m.move);
        return button;
      }),
    );
    const moves = line.map((step) => step.move).join(" ");
    let text = moves ? "This line: " + moves + ". " : "A new line, from the position now. ";
    if (here && here.over) text += "The game is over here.";
    else text += line.length % 2 === 0 ? "Next: your opponent’s move." : "Next: your answer.";
    status.textContent = text;
    undo.disabled = line.length === 0 && chosen.length === 0;
  };

  // The last move of the line, outlined on its board.
  const mark = () => {
    if (!line.length) return;
    const names = squares(line[line.length - 1].move);
    board.querySelectorAll(".cell[data-square]").forEach((el) => {
      if (squares(el.getAttribute("data-square")).some((s) => names.includes(s))) {
        el.classList.add("marked");
      }
    });
  };

  const show = () => {
    chosen = [];
    last = null;
    clicks = 0;
    here = null;
    const number = ++asked;
    planner.setAttribute("data-state", "loading");
    choices.replaceChildren();
    load(line.length ? line[line.length - 1].position : start)
      .then((found) => {
        if (number !== asked) return;
        draw(found.svg);
        here = found;
        mark();
        render();
        planner.setAttribute("data-state", "ready");
      })
      .catch(() => {
        if (number !== asked) return;
        planner.setAttribute("data-state", "failed");
        status.textContent = "The board could not be loaded: write your lines in the box.";
      });
  };

  const play = (move) => {
    line.push({ move: move.move, position: move.position });
    write();
    show();
  };

  // Clicks narrow the moves to those naming the squares clicked, in order; a move is played once
  // it is the only one left and the clicks name it whole, or name its piece and a target.
  board.addEventListener("click", (event) => {
    const el = event.target.closest("[data-square]");
    if (!el || !here) return;
    const clicked = squares(el.getAttribute("data-square"));
    const key = clicked.join(" ");
    // A piece over two squares (a barrier) is one click, however many of its squares are hit.
    if (key === last || clicked.length === 0) return;
    last = key;
    chosen.push(...clicked);
    clicks += 1;
    if (left().length === 0) {
      chosen = clicked.slice();
      clicks = 1;
    }
    if (left().length === 0) {
      chosen = [];
      clicks = 0;
      last = null;
    }
    const remaining = left();
    const whole = (m) => m.names.join(" ") === chosen.join(" ");
    if (remaining.length === 1 && (clicks >= 2 || whole(remaining[0]))) {
      play(remaining[0]);
    } else {
      render();
    }
  });
  choices.addEventListener("click", (event) => {
    const button = event.target.closest("button[data-move]");
    const move = here && button && here.moves.find((m) => m.move === button.getAttribute("data-move"));
    if (move) play(move);
  });
  undo.addEventListener("click", () => {
    if (chosen.length) {
      chosen = [];
      last = null;
      clicks = 0;
      render();
    } else if (line.length) {
      line.pop();
      write();
      show();
    }
  });
  fresh.addEventListener("click", () => {
    line = [];
    before = null;
    planner.setAttribute("data-line", "");
    show();
  });
  // What is typed in the box stays as typed: the line being built ends there.
  box.addEventListener("input", () => {
    if (before === null && !line.length) return;
    line = [];
    before = null;
    planner.setAttribute("data-line", "");
    show();
  });
  // The game moved while lines were being written (kuryr.js keeps the page rather than lose them).
  const game = document.getElementById("game");
  if (game) {
    game.addEventListener("kuryr:stale", () => {
      planner.setAttribute("data-state", "stale");
      status.textContent =
        "Your opponent has moved: these lines start from a position that has gone. Reload the page to plan from the new one (copy your lines first to keep them).";
    });
  }

  planner.setAttribute("data-line", "");
  planner.hidden = false;
  document.getElementById("plan").classList.add("planning");
  show();
})();
