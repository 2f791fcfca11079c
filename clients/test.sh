#!/usr/bin/env bash
# The generated clients, end to end: a Python client (openapi-python-client) and a TypeScript
# client (openapi-typescript + openapi-fetch) generated from openapi.yaml, checked strictly
# (`mypy --strict`; `tsc --strict` and no cast), then each plays a whole game of every game
# against the real server through the generated client alone (docs/clients.md).
#
#   clients/test.sh                        # scripts/test.sh runs it last
#   KURYR_BIN=path/to/kuryr clients/test.sh   # that server binary instead of cargo build's
#
# Needs python3 (with venv) and node with npm; `.ci/run` installs them where they are missing.
# Downloads are cached under ~/.cache (pip, npm); what is generated or installed stays in
# clients/, ignored by git.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

step() { printf '\n== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }
for tool in python3 node npm; do
  command -v "$tool" >/dev/null || { echo "clients/test.sh needs $tool" >&2; exit 2; }
done
export PIP_CACHE_DIR="${PIP_CACHE_DIR:-$HOME/.cache/pip}"
export npm_config_cache="${npm_config_cache:-$HOME/.cache/npm}"

# A generator's output must hold no warning: it would be a part of the API a client lacks.
no_warning() {
  local output
  output=$("$@" 2>&1) || { printf '%s\n' "$output"; return 1; }
  printf '%s\n' "$output"
  if printf '%s\n' "$output" | grep -v 'Unknown user config' | grep -qi 'warn'; then
    echo "$1 warned: fix openapi.yaml where it is generated (src/api/openapi/document.rs)" >&2
    return 1
  fi
}

step "Python client: generate with openapi-python-client, check with mypy --strict"
cd "$root/clients/python"
[ -x .venv/bin/python ] || python3 -m venv .venv
.venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
rm -rf generated
# The generator runs ruff on what it writes: it looks for it on PATH.
PATH="$PWD/.venv/bin:$PATH" no_warning .venv/bin/openapi-python-client generate \
  --path ../../openapi.yaml --config config.yaml --output-path generated --fail-on-warning
MYPYPATH=generated .venv/bin/mypy --strict generated/kuryr_client play.py

step "TypeScript client: generate with openapi-typescript, check with tsc --strict"
cd "$root/clients/typescript"
npm ci --no-audit --no-fund --loglevel=error
rm -rf src/generated dist
no_warning npm run --silent generate
node check-casts.mjs src/play.ts src/generated/kuryr.ts
npm run --silent build

step "the server, on a free port with a data folder of its own"
cd "$root"
if [ -z "${KURYR_BIN:-}" ]; then
  cargo build --locked --quiet --bin kuryr
  KURYR_BIN="${CARGO_TARGET_DIR:-target}/debug/kuryr"
fi
data=$(mktemp -d /tmp/kuryr-clients.XXXXXX)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
# Mail goes to files in the data folder (no SMTP server is set): nobody needs to confirm an
# address to play. Each player sends a few hundred requests a second, far over the per-user
# limit meant for people (1200 a minute).
KURYR_LIMIT_REQUESTS_PER_USER=off KURYR_LOG=warn \
  "$KURYR_BIN" --data-dir "$data" serve --listen "127.0.0.1:$port" >"$data/server.log" 2>&1 &
server=$!
stop() {
  kill "$server" 2>/dev/null && wait "$server" 2>/dev/null || true
  rm -rf "$data"
}
trap stop EXIT
url="http://127.0.0.1:$port"
for _ in $(seq 100); do
  python3 -c "import urllib.request; urllib.request.urlopen('$url/readyz')" 2>/dev/null && break
  kill -0 "$server" 2>/dev/null || { cat "$data/server.log"; exit 1; }
  sleep 0.1
done
echo "listening on $url"

step "Python client: every game, and two problems"
(cd clients/python && PYTHONPATH=generated .venv/bin/python play.py "$url") || { tail -n 50 "$data/server.log"; exit 1; }

step "TypeScript client: every game, and two problems"
(cd clients/typescript && node dist/play.js "$url") || { tail -n 50 "$data/server.log"; exit 1; }
