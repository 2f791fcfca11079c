#!/usr/bin/env bash
# Schemathesis against a fresh server: every check, the coverage and fuzzing phases (then the
# stateful one), with a token whose user is in games of every kind. Exits non-zero on any
# failure. See docs/testing.md.
#
#   scripts/schemathesis.sh                 # builds the debug binary, installs Schemathesis
#                                           # into ~/.cache/kuryr-schemathesis the first time
#   KURYR_BIN=target/release/kuryr scripts/schemathesis.sh
#   ST_MAX_EXAMPLES=200 ST_PHASES=coverage,fuzzing scripts/schemathesis.sh
#
# Extra arguments go to `st run`.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

st_version="${ST_VERSION:-4.32.5}"
venv="${ST_VENV:-$HOME/.cache/kuryr-schemathesis}"
max_examples="${ST_MAX_EXAMPLES:-50}"
phases="${ST_PHASES:-examples,coverage,fuzzing,stateful}"
seed="${ST_SEED:-1}"

step() { printf '\n== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }

if [ ! -x "$venv/bin/st" ] || [ "$("$venv/bin/st" --version 2>/dev/null)" != "st, version $st_version" ]; then
  step "installing Schemathesis $st_version into $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "schemathesis==$st_version"
fi

bin="${KURYR_BIN:-}"
if [ -z "$bin" ]; then
  step "cargo build"
  cargo build --locked --bin kuryr
  bin="${CARGO_TARGET_DIR:-target}/debug/kuryr"
fi

work=$(mktemp -d /tmp/kuryr-schemathesis.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
server=""
cleanup() {
  if [ -n "$server" ]; then kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; fi
  if [ "${ST_KEEP:-}" = "" ]; then rm -rf "$work"; else echo "kept $work"; fi
}
trap cleanup EXIT

step "server on 127.0.0.1:$port, data in $work"
# Mail goes to files in the data folder. The rate limits are off: the run makes far more
# registrations, logins and requests than any limit allows, and a 429 would hide what it tests
# (429 itself is described on every operation and tested in tests/api/limits.rs). The hashing
# queue is long enough that concurrent logins and registrations never meet 503 `busy`. Mail by
# webhook is on, so that its endpoint is tried with signatures that do not hold.
KURYR_DATA_DIR="$work/data" \
KURYR_INBOUND_DOMAIN=play.kuryr.test \
KURYR_INBOUND_SECRET=whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw \
KURYR_LISTEN="127.0.0.1:$port" \
KURYR_WEBHOOK_ALLOW_PRIVATE=true \
KURYR_STREAM_KEEPALIVE_SECS=1 \
KURYR_HASH_QUEUE=1024 \
KURYR_LIMIT_LOGIN_FAILURES_PER_ACCOUNT=off \
KURYR_LIMIT_LOGIN_FAILURES_PER_CLIENT=off \
KURYR_LIMIT_REGISTRATIONS_PER_CLIENT=off \
KURYR_LIMIT_ACCOUNT_MAILS_PER_RECIPIENT=off \
KURYR_LIMIT_ACCOUNT_MAILS_PER_CLIENT=off \
KURYR_LIMIT_REQUESTS_PER_USER=off \
KURYR_LOG="${KURYR_LOG:-warn}" \
  "$bin" serve >"$work/server.log" 2>&1 &
server=$!
for _ in $(seq 100); do
  curl -fs "http://127.0.0.1:$port/readyz" >/dev/null 2>&1 && break
  sleep 0.1
done
curl -fs "http://127.0.0.1:$port/readyz" >/dev/null || { cat "$work/server.log"; exit 1; }

step "seeding users, games, challenges, tokens and webhooks"
python3 scripts/schemathesis/seed.py "http://127.0.0.1:$port" "$work"

# The stateful phase runs on its own, with a configuration that fixes no id (seed.py says why).
stateless=$(tr ',' '\n' <<<"$phases" | grep -vx stateful | paste -sd, || true)
stateful=$(tr ',' '\n' <<<"$phases" | grep -x stateful || true)
status=0
st_run() {
  local config=$1 run_phases=$2
  shift 2
  step "st run ($run_phases, $max_examples examples, all checks)"
  (
    cd "$work"
    # Bodies of the media types Schemathesis cannot make itself (a raw mail).
    export PYTHONPATH="$root/scripts/schemathesis${PYTHONPATH:+:$PYTHONPATH}"
    export SCHEMATHESIS_HOOKS=hooks
    "$venv/bin/st" --config-file "$work/$config" run \
      "http://127.0.0.1:$port/api/v1/openapi.json" \
      --checks all \
      --phases "$run_phases" \
      --max-examples "$max_examples" \
      --seed "$seed" \
      --workers 2 \
      --no-color \
      --output-sanitize false \
      "$@"
  ) || status=$?
}
if [ -n "$stateless" ]; then st_run schemathesis.toml "$stateless" "$@"; fi
if [ -n "$stateful" ]; then st_run schemathesis-stateful.toml stateful "$@"; fi

if grep -q "panicked" "$work/server.log"; then
  echo "the server panicked:" >&2
  grep -A5 "panicked" "$work/server.log" >&2
  status=1
fi
exit "$status"
