"""Kuryr from Python, through the client generated from `openapi.yaml` alone.

Two players register and log in, then play a whole game of every game the server knows, each
move picked from the legal moves the server lists; one player plans replies ahead in a game
(conditional moves) and sees one played with the opponent's move; then the errors a client must
handle are read as typed problems: an illegal move (422, with the legal moves) and a personal
access token without the scope a move needs (403, naming the scope).

    python play.py http://127.0.0.1:8080

Generate the client first (`clients/test.sh` does all of it): `docs/clients.md`.
"""

from __future__ import annotations

import random
import sys
import time
from typing import TypeVar

from kuryr_client import AuthenticatedClient, Client
from kuryr_client.api.accounts import login, register
from kuryr_client.api.challenges import accept_challenge, create_challenge
from kuryr_client.api.games import (
    game_kinds,
    get_conditional_moves,
    get_game,
    play_move,
    set_conditional_moves,
)
from kuryr_client.api.rules import legal_moves
from kuryr_client.api.tokens import create_token
from kuryr_client.models import (
    BackgammonOptions,
    ColorChoice,
    ConditionalMoves,
    ConditionalMovesRequest,
    GameKind,
    GameState,
    GameStatus,
    Login,
    MoveRequest,
    NewBackgammonChallenge,
    NewBackgammonChallengeGame,
    NewBasileusChallenge,
    NewBasileusChallengeGame,
    NewCheversiChallenge,
    NewCheversiChallengeGame,
    NewCubulusChallenge,
    NewCubulusChallengeGame,
    NewNubulusChallenge,
    NewNubulusChallengeGame,
    NewPersonalToken,
    NewProsternoChallenge,
    NewProsternoChallengeGame,
    NewSulucChallenge,
    NewSulucChallengeGame,
    PositionRequest,
    Problem,
    Registration,
    Scope,
)

PASSWORD = "correct horse battery"
# Far above what the strategy below needs (the longest game takes a few hundred plies): a game
# that does not end by then is a failure, never a game cut short.
PLY_CAP = 3000

T = TypeVar("T")


def ok(answer: T | Problem | None, what: str) -> T:
    """Every operation answers its result or a `Problem` (the RFC 9457 error document), typed."""
    if isinstance(answer, Problem):
        sys.exit(f"{what}: {answer.status} {answer.type_}: {answer.detail}")
    if answer is None:
        sys.exit(f"{what}: an answer the description does not list")
    return answer


def player(base_url: str, name: str) -> AuthenticatedClient:
    """Registers `name` (no mail needs confirming to play) and logs in: a client with its token."""
    anonymous = Client(base_url=base_url)
    body = Registration(username=name, email=f"{name}@example.org", password=PASSWORD)
    ok(register.sync(client=anonymous, body=body), f"register {name}")
    token = ok(login.sync(client=anonymous, body=Login(username=name, password=PASSWORD)), "login")
    return AuthenticatedClient(base_url=base_url, token=token.access_token)


Challenge = (
    NewCubulusChallenge
    | NewCheversiChallenge
    | NewSulucChallenge
    | NewNubulusChallenge
    | NewProsternoChallenge
    | NewBasileusChallenge
    | NewBackgammonChallenge
)


def challenge_to(kind: str, opponent: str) -> Challenge:
    """A challenge is one type per game (the description's `oneOf`, tagged by `game`), each with
    that game's options; the challenger plays White."""
    white = ColorChoice.WHITE
    match kind:
        case "cubulus":
            return NewCubulusChallenge(game=NewCubulusChallengeGame.CUBULUS, opponent=opponent, color=white)
        case "cheversi":
            return NewCheversiChallenge(game=NewCheversiChallengeGame.CHEVERSI, opponent=opponent, color=white)
        case "suluc":
            return NewSulucChallenge(game=NewSulucChallengeGame.SULUC, opponent=opponent, color=white)
        case "nubulus":
            return NewNubulusChallenge(game=NewNubulusChallengeGame.NUBULUS, opponent=opponent, color=white)
        case "prosterno":
            return NewProsternoChallenge(game=NewProsternoChallengeGame.PROSTERNO, opponent=opponent, color=white)
        case "basileus":
            return NewBasileusChallenge(game=NewBasileusChallengeGame.BASILEUS, opponent=opponent, color=white)
        case "backgammon":
            # A money game with the doubling cube: the decisions to double, take and roll come
            # as legal moves like any other.
            options = BackgammonOptions(cube=True, match_length=0)
            return NewBackgammonChallenge(
                game=NewBackgammonChallengeGame.BACKGAMMON, opponent=opponent, color=white, options=options
            )
    sys.exit(f"the server plays {kind}, which this example does not know yet")


def choose(kind: str, side: str, moves: list[str], rng: random.Random) -> str:
    """A move from the server's legal moves: at random (seeded), but steering towards an end.

    White attacks: a move that mates (`#`) first, then a check (`+`), then a capture (`x`), in
    the notation of every game that has them. Black never captures when it can help it. Played
    at random by both, Cubulus may trade its dice away and go round with kings and barriers for
    thousands of plies; this way every game here ends within a few hundred. Backgammon doubles
    now and then, takes every double and otherwise rolls: passing a double (like resigning,
    which is never listed) would end the game before the checkers are borne off."""
    if kind == "backgammon":
        if "take" in moves:
            return "take"
        if "double" in moves and rng.random() < 0.1:
            return "double"
        if "roll" in moves:
            return "roll"
    if side == "white":
        for wanted in ("#", "+", "x"):
            pool = [move for move in moves if wanted in move.lower()]
            if pool:
                return rng.choice(pool)
        return rng.choice(moves)
    quiet = [move for move in moves if "x" not in move.lower()]
    return rng.choice(quiet or moves)


def fetch(client: AuthenticatedClient, game_id: str) -> GameState:
    game = get_game.sync(game_id, client=client)
    if not isinstance(game, GameState):  # a 304 without a body only answers `If-None-Match`
        sys.exit(f"GET game {game_id}: {game!r}")
    return game


def play_whole_game(kind: str, white: AuthenticatedClient, black: AuthenticatedClient, opponent: str) -> GameState:
    challenge = ok(create_challenge.sync(client=white, body=challenge_to(kind, opponent)), f"challenge to {kind}")
    game = ok(accept_challenge.sync(challenge.id, client=black), "accept")
    rng = random.Random(f"kuryr-{kind}")
    while game.status != GameStatus.FINISHED:
        if game.ply > PLY_CAP:
            sys.exit(f"{kind}: no end after {PLY_CAP} plies")
        # The game says whose move it is; each player reads it with their own token (`my_turn`).
        mover = white if game.to_move == "white" else black
        game = fetch(mover, game.id)
        assert game.my_turn is True, f"{kind}: the server says it is not {game.to_move}'s move"
        move = choose(kind, str(game.to_move), list(game.legal_moves or []), rng)
        # `ply` guards against playing into a position we have not seen (409 `ply-mismatch`).
        played = ok(play_move.sync(game.id, client=mover, body=MoveRequest(move=move, ply=game.ply)), f"{kind} {move}")
        game = played.game
    assert game.result is not None and game.termination is not None, f"{kind}: finished without a result"
    return game


def plan_replies(white: AuthenticatedClient, black: AuthenticatedClient, opponent: str) -> None:
    """Black plans an answer to each of White's first three possible moves (conditional moves);
    White's move meets one of them, and Black's answer is played at once."""
    challenge = ok(create_challenge.sync(client=white, body=challenge_to("cheversi", opponent)), "challenge")
    game = ok(accept_challenge.sync(challenge.id, client=black), "accept")
    # The stateless rules give each of White's moves with the position it leads to, and Black's
    # answers there.
    here = ok(legal_moves.sync(GameKind.CHEVERSI, client=black, body=PositionRequest(position=game.position)), "legal moves")
    lines = []
    for choice in here.moves[:3]:
        after = ok(legal_moves.sync(GameKind.CHEVERSI, client=black, body=PositionRequest(position=choice.position)), "answers")
        lines.append([choice.move, after.moves[0].move])
    stored = ok(
        set_conditional_moves.sync(game.id, client=black, body=ConditionalMovesRequest(ply=game.ply, lines=lines)),
        "plan",
    )
    assert stored.lines == lines, stored
    # White sees nothing of it: their own plan in this game is empty.
    theirs = ok(get_conditional_moves.sync(game.id, client=white), "white's plan")
    assert isinstance(theirs, ConditionalMoves) and theirs.lines == [], theirs
    played = ok(play_move.sync(game.id, client=white, body=MoveRequest(move=lines[1][0], ply=game.ply)), "move")
    assert played.game.ply == game.ply + 2 and played.game.my_turn is True, played.game
    left = ok(get_conditional_moves.sync(game.id, client=black), "black's plan")
    assert left.lines == [], left
    print(f"  conditional moves: {len(lines)} lines stored; {lines[1][0]} was answered with {lines[1][1]} at once")


def show_problems(base_url: str, white: AuthenticatedClient, black: AuthenticatedClient, opponent: str) -> None:
    """What an illegal move and a token without the scope look like to a client."""
    challenge = ok(create_challenge.sync(client=white, body=challenge_to("cheversi", opponent)), "challenge")
    game = ok(accept_challenge.sync(challenge.id, client=black), "accept")
    first = (game.legal_moves or [])[0]
    ok(play_move.sync(game.id, client=white, body=MoveRequest(move=first, ply=0)), "first move")

    # Black places a piece where White's already stands: well written, but not legal.
    refused = play_move.sync(game.id, client=black, body=MoveRequest(move=first, ply=1))
    assert isinstance(refused, Problem), f"an illegal move was accepted: {refused!r}"
    assert refused.status == 422 and refused.type_.endswith(":illegal-move"), refused
    assert isinstance(refused.legal_moves, list) and refused.legal_moves, refused
    print(f"  illegal move {first!r}: {refused.type_}, {len(refused.legal_moves)} legal moves offered")

    # A personal access token for a script that only reads the account: it may not move.
    made = create_token.sync(client=black, body=NewPersonalToken(name="reader", scopes=[Scope.ACCOUNTREAD]))
    reader = AuthenticatedClient(base_url=base_url, token=ok(made, "token").token)
    refused = play_move.sync(game.id, client=reader, body=MoveRequest(move=refused.legal_moves[0], ply=1))
    assert isinstance(refused, Problem), f"a move without game:play was accepted: {refused!r}"
    assert refused.status == 403 and refused.type_ == "urn:kuryr:problem:missing-scope", refused
    assert refused.scope == Scope.GAMEPLAY, refused
    print(f"  token without game:play: {refused.status} {refused.type_}, scope {refused.scope}")


def main() -> None:
    base_url = sys.argv[1] if len(sys.argv) > 1 else "http://127.0.0.1:8080"
    white, black = player(base_url, "py-alice"), player(base_url, "py-bob")
    kinds = [kind.id for kind in ok(game_kinds.sync(client=white), "game kinds").games]
    for kind in kinds:
        start = time.monotonic()
        game = play_whole_game(str(kind), white, black, "py-bob")
        took = time.monotonic() - start
        summary = f" ({game.summary})" if game.summary else ""
        print(f"  {kind:<10} {game.ply:4} plies {took:5.1f} s  result {game.result}, {game.termination}{summary}")
    plan_replies(white, black, "py-bob")
    show_problems(base_url, white, black, "py-bob")
    print(f"python: {len(kinds)} games played to the end, a reply planned and played, 2 problems read")


if __name__ == "__main__":
    main()
