// Kuryr from TypeScript, through types generated from `openapi.yaml` (openapi-typescript) and
// the typed fetch client that reads them (openapi-fetch): no hand-written HTTP and no cast.
//
// Two players register and log in, then play a whole game of every game the server knows, each
// move picked from the legal moves the server lists; then the errors a client must handle are
// read as typed problems: an illegal move (422, with the legal moves) and a personal access
// token without the scope a move needs (403, naming the scope).
//
//     node dist/play.js http://127.0.0.1:8080
//
// Generate and compile first (`clients/test.sh` does all of it): `docs/clients.md`.

import createClient, { type Client } from "openapi-fetch";
import type { components, paths } from "./generated/kuryr.js";

type Kuryr = Client<paths>;
type Game = components["schemas"]["GameState"];
type NewChallenge = components["schemas"]["NewChallenge"];
type Problem = components["schemas"]["Problem"];

const PASSWORD = "correct horse battery";
// Far above what the strategy below needs (the longest game takes a few hundred plies): a game
// that does not end by then is a failure, never a game cut short.
const PLY_CAP = 3000;

/** Every call answers `data` or `error`, the RFC 9457 problem document, both typed. */
async function ok<T>(call: Promise<{ data?: T; error?: Problem; response: Response }>, what: string): Promise<T> {
  const { data, error, response } = await call;
  if (error !== undefined) {
    throw new Error(`${what}: ${response.status} ${error.type}: ${error.detail}`);
  }
  if (data === undefined) {
    throw new Error(`${what}: ${response.status} without a body`);
  }
  return data;
}

/** Registers `name` (no mail needs confirming to play) and logs in: a client with its token. */
async function player(baseUrl: string, name: string): Promise<Kuryr> {
  const anonymous = createClient<paths>({ baseUrl });
  const account = { username: name, email: `${name}@example.org`, password: PASSWORD };
  await ok(anonymous.POST("/api/v1/auth/register", { body: account }), `register ${name}`);
  const login = { username: name, password: PASSWORD };
  const token = await ok(anonymous.POST("/api/v1/auth/login", { body: login }), "login");
  return withToken(baseUrl, token.access_token);
}

function withToken(baseUrl: string, token: string): Kuryr {
  return createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${token}` } });
}

/** A challenge is one type per game (the description's `oneOf`, tagged by `game`), each with that
 * game's options; the challenger plays White. */
function challengeTo(kind: string, opponent: string): NewChallenge {
  const color = "white";
  switch (kind) {
    case "cubulus":
    case "cheversi":
    case "suluc":
    case "nubulus":
    case "prosterno":
    case "basileus":
      return { game: kind, opponent, color };
    case "backgammon":
      // A money game with the doubling cube: the decisions to double, take and roll come as
      // legal moves like any other.
      return { game: kind, opponent, color, options: { cube: true, match_length: 0 } };
  }
  throw new Error(`the server plays ${kind}, which this example does not know yet`);
}

/** A seeded pseudo-random generator (mulberry32), so that a run can be replayed. */
function seeded(seed: string): () => number {
  let state = 0;
  for (const char of seed) state = (Math.imul(state, 31) + char.charCodeAt(0)) | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = Math.imul(state ^ (state >>> 15), 1 | state);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A move from the server's legal moves: at random (seeded), but steering towards an end.
 *
 * White attacks: a move that mates (`#`) first, then a check (`+`), then a capture (`x`), in the
 * notation of every game that has them. Black never captures when it can help it. Played at
 * random by both, Cubulus may trade its dice away and go round with kings and barriers for
 * thousands of plies; this way every game here ends within a few hundred. Backgammon doubles now
 * and then, takes every double and otherwise rolls: passing a double (like resigning, which is
 * never listed) would end the game before the checkers are borne off. */
function choose(kind: string, side: string, moves: string[], random: () => number): string {
  const pick = (from: string[]): string => {
    const move = from[Math.floor(random() * from.length)];
    if (move === undefined) throw new Error(`${kind}: no legal move to play`);
    return move;
  };
  if (kind === "backgammon") {
    if (moves.includes("take")) return "take";
    if (moves.includes("double") && random() < 0.1) return "double";
    if (moves.includes("roll")) return "roll";
  }
  if (side === "white") {
    for (const wanted of ["#", "+", "x"]) {
      const pool = moves.filter((move) => move.toLowerCase().includes(wanted));
      if (pool.length > 0) return pick(pool);
    }
    return pick(moves);
  }
  const quiet = moves.filter((move) => !move.toLowerCase().includes("x"));
  return pick(quiet.length > 0 ? quiet : moves);
}

async function playWholeGame(kind: string, white: Kuryr, black: Kuryr, opponent: string): Promise<Game> {
  const body = challengeTo(kind, opponent);
  const challenge = await ok(white.POST("/api/v1/challenges", { body }), `challenge to ${kind}`);
  const accepted = black.POST("/api/v1/challenges/{id}/accept", { params: { path: { id: challenge.id } } });
  let game = await ok(accepted, "accept");
  const random = seeded(`kuryr-${kind}`);
  while (game.status !== "finished") {
    if (game.ply > PLY_CAP) throw new Error(`${kind}: no end after ${PLY_CAP} plies`);
    // The game says whose move it is; each player reads it with their own token (`my_turn`).
    const mover = game.to_move === "white" ? white : black;
    const id = game.id;
    game = await ok(mover.GET("/api/v1/games/{id}", { params: { path: { id } } }), `GET game ${id}`);
    if (game.my_turn !== true) throw new Error(`${kind}: the server says it is not ${game.to_move}'s move`);
    const move = choose(kind, String(game.to_move), game.legal_moves ?? [], random);
    // `ply` guards against playing into a position we have not seen (409 `ply-mismatch`).
    const moveBody = { move, ply: game.ply };
    const played = mover.POST("/api/v1/games/{id}/moves", { params: { path: { id } }, body: moveBody });
    game = (await ok(played, `${kind} ${move}`)).game;
  }
  if (game.result === null || game.termination === null) throw new Error(`${kind}: finished without a result`);
  return game;
}

/** What an illegal move and a token without the scope look like to a client. */
async function showProblems(baseUrl: string, white: Kuryr, black: Kuryr, opponent: string): Promise<void> {
  const body = challengeTo("cheversi", opponent);
  const challenge = await ok(white.POST("/api/v1/challenges", { body }), "challenge");
  const path = { id: challenge.id };
  const game = await ok(black.POST("/api/v1/challenges/{id}/accept", { params: { path } }), "accept");
  const first = game.legal_moves?.[0];
  if (first === undefined) throw new Error("a new Cheversi game without legal moves");
  const params = { path: { id: game.id } };
  await ok(white.POST("/api/v1/games/{id}/moves", { params, body: { move: first, ply: 0 } }), "first move");

  // Black places a piece where White's already stands: well written, but not legal.
  const illegal = await black.POST("/api/v1/games/{id}/moves", { params, body: { move: first, ply: 1 } });
  const refused = illegal.error;
  if (refused === undefined) throw new Error("an illegal move was accepted");
  if (refused.status !== 422 || !refused.type.endsWith(":illegal-move")) throw new Error(`not illegal-move: ${refused.type}`);
  const legal = refused.legal_moves ?? [];
  if (legal.length === 0) throw new Error("an illegal-move problem without the legal moves");
  console.log(`  illegal move '${first}': ${refused.type}, ${legal.length} legal moves offered`);

  // A personal access token for a script that only reads the account: it may not move.
  const tokenBody: components["schemas"]["NewPersonalToken"] = { name: "reader", scopes: ["account:read"] };
  const made = await ok(black.POST("/api/v1/tokens", { body: tokenBody }), "token");
  const reader = withToken(baseUrl, made.token);
  const move = legal[0] ?? first;
  const denied = (await reader.POST("/api/v1/games/{id}/moves", { params, body: { move, ply: 1 } })).error;
  if (denied === undefined) throw new Error("a move without game:play was accepted");
  if (denied.status !== 403 || denied.type !== "urn:kuryr:problem:missing-scope" || denied.scope !== "game:play") {
    throw new Error(`not missing-scope for game:play: ${denied.type} ${denied.scope}`);
  }
  console.log(`  token without game:play: ${denied.status} ${denied.type}, scope ${denied.scope}`);
}

/** Black plans an answer to two of White's possible first moves (conditional moves); White's
 * move meets one, and Black's answer is played with it. */
async function planReplies(white: Kuryr, black: Kuryr, opponent: string): Promise<void> {
  const body = challengeTo("cheversi", opponent);
  const challenge = await ok(white.POST("/api/v1/challenges", { body }), "challenge");
  const game = await ok(black.POST("/api/v1/challenges/{id}/accept", { params: { path: { id: challenge.id } } }), "accept");
  const kind: components["schemas"]["GameKind"] = "cheversi";
  const rules = { path: { game: kind } };
  const here = await ok(black.POST("/api/v1/rules/{game}/moves", { params: rules, body: { position: game.position } }), "moves");
  const lines: string[][] = [];
  for (const choice of here.moves.slice(0, 2)) {
    const after = await ok(black.POST("/api/v1/rules/{game}/moves", { params: rules, body: { position: choice.position } }), "answers");
    const answer = after.moves[0];
    if (answer === undefined) throw new Error(`no answer to ${choice.move}`);
    lines.push([choice.move, answer.move]);
  }
  const params = { path: { id: game.id } };
  const stored = await ok(black.PUT("/api/v1/games/{id}/conditional", { params, body: { ply: game.ply, lines } }), "plan");
  if (JSON.stringify(stored.lines) !== JSON.stringify(lines)) throw new Error(`stored ${JSON.stringify(stored.lines)}`);
  const [move, answer] = lines[0] ?? [];
  if (move === undefined || answer === undefined) throw new Error("no line");
  const played = await ok(white.POST("/api/v1/games/{id}/moves", { params, body: { move, ply: game.ply } }), "move");
  if (played.game.ply !== game.ply + 2) throw new Error(`the reply was not played: ply ${played.game.ply}`);
  const left = await ok(black.GET("/api/v1/games/{id}/conditional", { params }), "plan left");
  if (left.lines.length !== 0) throw new Error(`lines left: ${JSON.stringify(left.lines)}`);
  console.log(`  conditional moves: ${move} was answered with ${answer} at once`);
}

/** The stateless rules endpoints take a game's options like a challenge does: Cubulus's extended
 * rules give a king and a barrier moves the standard rules do not. */
async function rulesWithOptions(client: Kuryr): Promise<void> {
  const position =
    "w 13A1 23B1 53C1 63D1 E1 63F1 53G1 23H1 13J1 C2D2 F2G2 (C8D8) (F8G8) (14A9) (24B9) (54C9) (64D9) (E9) (64F9) (54G9) (24H9) (14J9)";
  const game: components["schemas"]["GameKind"] = "cubulus";
  const params = { path: { game } };
  const standard = await ok(client.POST("/api/v1/rules/{game}/moves", { params, body: { position } }), "standard moves");
  const options: components["schemas"]["RequestedOptions"] = { extended: true };
  const extended = await ok(client.POST("/api/v1/rules/{game}/moves", { params, body: { position, options } }), "extended moves");
  if (extended.moves.length <= standard.moves.length) {
    throw new Error(`extended Cubulus has ${extended.moves.length} opening moves, standard ${standard.moves.length}`);
  }
  console.log(`  cubulus opening moves: ${standard.moves.length} standard, ${extended.moves.length} with { extended: true }`);
}

async function main(): Promise<void> {
  const baseUrl = process.argv[2] ?? "http://127.0.0.1:8080";
  const white = await player(baseUrl, "ts-alice");
  const black = await player(baseUrl, "ts-bob");
  const kinds = (await ok(white.GET("/api/v1/games/kinds"), "game kinds")).games.map((kind) => kind.id);
  for (const kind of kinds) {
    const start = performance.now();
    const game = await playWholeGame(kind, white, black, "ts-bob");
    const took = ((performance.now() - start) / 1000).toFixed(1);
    const summary = game.summary === null ? "" : ` (${game.summary})`;
    const line = `${kind.padEnd(10)} ${String(game.ply).padStart(4)} plies ${took.padStart(5)} s`;
    console.log(`  ${line}  result ${game.result}, ${game.termination}${summary}`);
  }
  await planReplies(white, black, "ts-bob");
  await showProblems(baseUrl, white, black, "ts-bob");
  await rulesWithOptions(white);
  console.log(`typescript: ${kinds.length} games played to the end, a reply planned and played, 2 problems read`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
