#!/usr/bin/env python3
"""Seeds a fresh Kuryr server for a Schemathesis run, through its API only, and writes the
Schemathesis configuration that points the run at what it made.

    seed.py BASE_URL OUT_DIR

Makes the users alice (the run's token), bob (her opponent), carol and dave (whose tokens the
two logout operations spend); a game of every kind between alice and bob, a few moves into it;
challenges alice may accept, decline and cancel; a personal token, a webhook with a delivery to
retry; with alice's and bob's addresses confirmed by the mails the server wrote, tournaments of
alice's: one open, one open with bob in it, one running. Writes OUT_DIR/schemathesis.toml (with the ids and tokens), OUT_DIR/schemathesis-stateful.toml
(the same without fixed ids, for the stateful phase) and OUT_DIR/seed.json.
Standard library only.
"""

import email
import glob
import json
import os
import re
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from email import policy

BASE = sys.argv[1].rstrip("/")
OUT = sys.argv[2]
PASSWORD = "correct horse battery staple"


def call(method, path, token=None, body=None, expect=(200, 201, 204)):
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, data=data, method=method)
    if data is not None:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(request) as response:
            status, text = response.status, response.read()
    except urllib.error.HTTPError as error:
        status, text = error.code, error.read()
    answer = json.loads(text) if text else None
    if status not in expect:
        sys.exit(f"seed: {method} {path} answered {status}: {answer}")
    return answer


def user(name):
    call("POST", "/api/v1/auth/register", body={
        "username": name, "email": f"{name}@example.org", "password": PASSWORD})
    return call("POST", "/api/v1/auth/login", body={"username": name, "password": PASSWORD})[
        "access_token"]


def confirm(name):
    """Follows the confirmation link of the mail the server wrote to `name` (no SMTP: a file)."""
    for _ in range(100):
        for path in glob.glob(os.path.join(OUT, "data", "mail", "*.eml")):
            with open(path, "rb") as f:
                mail = email.message_from_binary_file(f, policy=policy.default)
            if f"{name}@example.org" not in str(mail["To"]):
                continue
            found = re.search(r"/confirm-email\?token=([A-Za-z0-9._-]+)",
                              mail.get_body(("plain",)).get_content())
            if found:
                form = urllib.parse.urlencode({"token": found.group(1)}).encode()
                urllib.request.urlopen(urllib.request.Request(
                    BASE + "/confirm-email", data=form, method="POST")).read()
                return
        time.sleep(0.1)
    sys.exit(f"seed: no confirmation mail for {name}")


def play_some(game_id, tokens, moves):
    """Plays up to `moves` moves, each the first legal move of whoever is to move."""
    for _ in range(moves):
        game = call("GET", f"/api/v1/games/{game_id}")
        if game["status"] != "active" or not game.get("legal_moves"):
            return
        mover = None
        for token in tokens:
            if call("GET", f"/api/v1/games/{game_id}", token)["my_turn"]:
                mover = token
        if mover is None:
            return
        call("POST", f"/api/v1/games/{game_id}/moves", mover,
             {"move": game["legal_moves"][0], "ply": game["ply"]})


def main():
    alice, bob = user("alice"), user("bob")
    carol, dave = user("carol"), user("dave")

    kinds = [kind["id"] for kind in call("GET", "/api/v1/games/kinds")["games"]]
    games = []
    for i, kind in enumerate(kinds):
        # Half with a clock, half without; alice plays white in every other game.
        body = {"game": kind, "opponent": "bob", "color": "white" if i % 2 else "black"}
        if i % 2:
            body["days_per_move"] = 7
        challenge = call("POST", "/api/v1/challenges", alice, body)
        game = call("POST", f"/api/v1/challenges/{challenge['id']}/accept", bob)
        play_some(game["id"], [alice, bob], 4)
        games.append(game["id"])
    # A game that is over, for the dice, the record and the refusals of a finished game.
    challenge = call("POST", "/api/v1/challenges", alice, {"game": kinds[0], "opponent": "bob"})
    over = call("POST", f"/api/v1/challenges/{challenge['id']}/accept", bob)["id"]
    call("POST", f"/api/v1/games/{over}/resign", bob)
    games.append(over)

    # Challenges: to alice (she may accept or decline), by alice (she may cancel), open ones.
    challenges = []
    for kind in kinds:
        challenges.append(call("POST", "/api/v1/challenges", bob,
                               {"game": kind, "opponent": "alice"})["id"])
        challenges.append(call("POST", "/api/v1/challenges", alice,
                               {"game": kind, "opponent": "bob"})["id"])
        challenges.append(call("POST", "/api/v1/challenges", bob, {"game": kind})["id"])

    tokens = [call("POST", "/api/v1/tokens", alice,
                   {"name": f"seed {i}", "scopes": ["account:read"]})["id"] for i in range(3)]

    # A webhook whose deliveries fail (nothing listens there), so that one can be retried.
    webhooks = [call("POST", "/api/v1/webhooks", alice,
                     {"url": f"http://127.0.0.1:9/hook{i}"})["id"] for i in range(2)]
    challenge = call("POST", "/api/v1/challenges", bob, {"game": kinds[0], "opponent": "alice"})
    challenges.append(challenge["id"])
    events = []
    for _ in range(100):
        page = call("GET", f"/api/v1/webhooks/{webhooks[0]}/deliveries", alice)
        events = [delivery["event_id"] for delivery in page["items"]]
        if events:
            break
        time.sleep(0.1)
    if not events:
        sys.exit("seed: the webhook got no delivery")

    # Tournaments need confirmed addresses.
    confirm("alice")
    confirm("bob")
    open_one = call("POST", "/api/v1/tournaments", alice,
                    {"name": "Open Swiss", "game": kinds[1], "format": "swiss", "rounds": 3})
    call("POST", f"/api/v1/tournaments/{open_one['id']}/join", bob)
    startable = call("POST", "/api/v1/tournaments", alice,
                     {"name": "Ready round robin", "game": kinds[1], "format": "round_robin"})
    for token in [alice, bob]:
        call("POST", f"/api/v1/tournaments/{startable['id']}/join", token)
    running = call("POST", "/api/v1/tournaments", alice,
                   {"name": "Running round robin", "game": kinds[1], "format": "round_robin"})
    for token in [alice, bob]:
        call("POST", f"/api/v1/tournaments/{running['id']}/join", token)
    call("POST", f"/api/v1/tournaments/{running['id']}/start", alice)
    tournaments = [open_one["id"], startable["id"], running["id"]]

    seed = {
        "alice": alice, "carol": carol, "dave": dave, "tournaments": tournaments,
        "games": games, "challenges": challenges, "tokens": tokens,
        "webhooks": webhooks, "events": events, "kinds": kinds,
    }
    with open(f"{OUT}/seed.json", "w") as f:
        json.dump(seed, f, indent=1)
    with open(f"{OUT}/schemathesis.toml", "w") as f:
        f.write(config(seed, fixed_ids=True))
    with open(f"{OUT}/schemathesis-stateful.toml", "w") as f:
        f.write(config(seed, fixed_ids=False))
    print(f"seed: {len(games)} games, {len(challenges)} challenges, {len(tokens)} tokens, "
          f"{len(webhooks)} webhooks, {len(events)} deliveries")


def toml(value):
    return json.dumps(value)


def config(seed, fixed_ids):
    """The run's configuration: the token, and which real resource each operation works on.

    The stateful phase's configuration fixes no id: a fixed parameter holds there too, so an
    operation that follows a creation would be sent to the seeded resource instead of the new
    one, and a seeded resource deleted earlier in the phase would be read as the new one lost
    (ST302). There the links give every id."""
    games = seed["games"]
    # One game per kind of action, so that a resignation does not end the game that moves are
    # tried on: 0 Cubulus, 1 Cheversi, 2 Suluc, 3 Nubulus, 4 Prosterno, 5 Basileus,
    # 6 Backgammon, 7 finished.
    on = {
        "getGame": games[0], "getMoves": games[0], "playMove": games[6],
        "getRecord": games[7], "getDice": games[2], "streamGameEvents": games[1],
        "resign": games[5], "offerDraw": games[4], "acceptDraw": games[4],
        "declineDraw": games[4],
        "getConditionalMoves": games[3], "setConditionalMoves": games[3],
        "clearConditionalMoves": games[3],
        "getChallenge": seed["challenges"][0], "acceptChallenge": seed["challenges"][3],
        "declineChallenge": seed["challenges"][6], "cancelChallenge": seed["challenges"][1],
        "getToken": seed["tokens"][0],
        "getWebhook": seed["webhooks"][0], "updateWebhook": seed["webhooks"][0],
        "rotateWebhookSecret": seed["webhooks"][0], "listWebhookDeliveries": seed["webhooks"][0],
        "revokeToken": seed["tokens"][1], "deleteWebhook": seed["webhooks"][1],
        "getTournament": seed["tournaments"][2],
        "listTournamentPlayers": seed["tournaments"][2],
        "listTournamentGames": seed["tournaments"][2],
        "getTournamentStandings": seed["tournaments"][2],
        "joinTournament": seed["tournaments"][0], "leaveTournament": seed["tournaments"][0],
        "startTournament": seed["tournaments"][1],
    }
    lines = [
        "# Written by scripts/schemathesis/seed.py for one run; see docs/testing.md.",
        f'headers = {{ Authorization = {toml("Bearer " + seed["alice"])} }}',
        "request-timeout = 10",
        "",
    ]
    # An event stream stays open: Schemathesis reads it until a few events came or its
    # timeout passed, which these keep short.
    for operation in ["streamEvents", "streamGameEvents"]:
        lines += [
            "[[operations]]",
            f"include-operation-id = {toml(operation)}",
            "request-timeout = 2",
            "max-stream-events = 5",
            "",
        ]
    for operation, value in (on.items() if fixed_ids else []):
        lines += [
            "[[operations]]",
            f"include-operation-id = {toml(operation)}",
            f"parameters = {{ id = {toml(value)} }}",
            "",
        ]
    if fixed_ids:
        lines += [
            "[[operations]]",
            'include-operation-id = "retryWebhookDelivery"',
            f'parameters = {{ id = {toml(seed["webhooks"][0])}, event = {seed["events"][0]} }}',
            "",
        ]
    if fixed_ids:
        lines += [
            "[[operations]]",
            'include-operation-id = "removeTournamentPlayer"',
            f'parameters = {{ id = {toml(seed["tournaments"][0])}, username = "bob" }}',
            "",
        ]
    lines += [
        "[[operations]]",
        'include-operation-id = "getUser"',
        'parameters = { username = "bob" }',
        "",
        # Logging out ends the token that sends it: each of the two has a user of its own.
        "[[operations]]",
        'include-operation-id = "logout"',
        f'headers = {{ Authorization = {toml("Bearer " + seed["carol"])} }}',
        "",
        "[[operations]]",
        'include-operation-id = "logoutEverywhere"',
        f'headers = {{ Authorization = {toml("Bearer " + seed["dave"])} }}',
        "",
    ]
    # A request the description allows that the server refuses for what no schema can say: a
    # move or position the game's rules refuse, an opponent who does not exist, a link or reset
    # token the server did not sign, a webhook host that does not resolve, an event id the
    # stream never gave. For these operations,
    # and for that refusal's status alone, a refused valid request is no failure.
    accepted = ["2xx", "3xx", "401", "403", "404", "409", "429", "5xx"]
    semantic = {
        "streamEvents": "410",      # events-gone: an id this server never gave
        "streamGameEvents": "410",
        "playMove": "422",          # illegal-move, invalid-move-syntax, ambiguous-move
        "setConditionalMoves": "422",  # the same for a line's move; conditional-lines-disagree
        "legalMoves": "422",        # invalid-position
        "playOnPosition": "422",    # invalid-position, illegal-move, invalid-move-syntax
        "replayRecord": "422",      # invalid-record
        "cheversiScore": "422",     # invalid-position
        "createChallenge": "422",   # validation-failed: no user of that name
        "createTournament": "422",  # validation-failed: a deadline or start not in the future,
                                    # a start before the deadline, rounds a Swiss needs or a
                                    # round robin refuses, players beyond the format's limit or
                                    # fewer than min_players, a rating range upside down
        "updateMe": "422",          # an address with more than 64 characters before the `@`
                                    # (a pattern saying so needs a lookahead, which generators
                                    # cannot follow)
        "createWebhook": "422",     # webhook-address-refused: the host does not resolve
        "updateWebhook": "422",     # webhook-address-refused
        "resetPassword": "422",     # validation-failed: the token is not one the server signed
        "confirmEmailPage": "400",  # the page of a link that is invalid, expired or used
        "confirmEmail": "400",      # its button, for such a link
        "undoEmailChangePage": "400",
        "undoEmailChange": "400",
        "resetPasswordPage": "400",
        "resetPasswordForm": "400",
        "unsubscribePage": "400",
        "unsubscribe": "400",
        "getGameBoardSvg": "422",   # a ply beyond the game's
        "getGameBoardPng": "422",
        "boardSvg": "422",          # invalid-position
        "boardPng": "422",
        # An Idempotency-Key already sent with another request is refused with 422: which keys
        # were sent before is state no schema holds.
        "register": "422",
        "acceptChallenge": "422",
        "rotateWebhookSecret": "422",
        "createToken": "422",
        "createEventTicket": "422",
    }
    for operation, status in semantic.items():
        lines += [
            "[[operations]]",
            f"include-operation-id = {toml(operation)}",
            f"checks.positive_data_acceptance.expected-statuses = {toml(accepted + [status])}",
            "",
        ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
