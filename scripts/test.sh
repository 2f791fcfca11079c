#!/usr/bin/env bash
# The whole test suite: every test on SQLite, then the database tests (API, durability, event
# streams, and the cluster: three servers behind HAProxy, tests/cluster.rs) again on PostgreSQL.
#
#   scripts/test.sh            # starts a throwaway PostgreSQL cluster (installing PostgreSQL
#                              # from Debian's packages first if it is missing and we are root)
#   KURYR_TEST_DATABASE_URL=postgres://user@host:port/db scripts/test.sh
#                              # uses that server instead (tests create and drop databases there)
#
# The first run includes the browser test (tests/browser.rs: headless Chromium through
# chromedriver against the real server, screenshots in target/screenshots/); Chromium and
# chromedriver are installed from Debian's packages when missing and we are root.
#
# Extra arguments go to both `cargo test` runs. Last, clients/test.sh generates the Python and
# TypeScript clients from openapi.yaml and plays every game through each against the server
# (docs/clients.md); it needs python3 (with venv) and node with npm.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== %s (%s)\n' "$1" "$(date -u +%H:%M:%S)"; }

if [ -z "${KURYR_TEST_DATABASE_URL:-}" ]; then
  pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1 || true)
  if [ -z "$pg_bin" ] || [ ! -x "$pg_bin/initdb" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      step "installing PostgreSQL"
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq
      apt-get install -y -qq --no-install-recommends postgresql >/dev/null
      pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
    else
      echo "PostgreSQL's server is missing: install it (Debian: apt-get install postgresql)," >&2
      echo "or set KURYR_TEST_DATABASE_URL to a server where the tests may create databases." >&2
      exit 2
    fi
  fi
  step "PostgreSQL: a throwaway cluster on 127.0.0.1"
  pg_dir=$(mktemp -d /tmp/kuryr-test-pg.XXXXXX)
  chmod 755 "$pg_dir"
  pg_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' 2>/dev/null \
    || shuf -i 20000-60000 -n 1)
  # PostgreSQL refuses to run as root: then the cluster belongs to the `postgres` user.
  as_owner() { if [ "$(id -u)" = 0 ]; then su postgres -s /bin/sh -c "$*"; else sh -c "$*"; fi; }
  [ "$(id -u)" = 0 ] && chown postgres "$pg_dir"
  as_owner "'$pg_bin/initdb' -D '$pg_dir/data' -U postgres --auth=trust -E UTF8 >/dev/null"
  # TLS on, with the test certificate (tests/fixtures/tls: a CA, and a server certificate for
  # localhost and 127.0.0.1 it signed), so the tests can connect with sslmode=verify-full.
  cp tests/fixtures/tls/server.pem "$pg_dir/server.crt"
  cp tests/fixtures/tls/server-key.pem "$pg_dir/server.key"
  chmod 600 "$pg_dir/server.crt" "$pg_dir/server.key"
  [ "$(id -u)" = 0 ] && chown postgres "$pg_dir/server.crt" "$pg_dir/server.key"
  pg_tls="-c ssl=on -c ssl_cert_file='$pg_dir/server.crt' -c ssl_key_file='$pg_dir/server.key'"
  as_owner "'$pg_bin/pg_ctl' -D '$pg_dir/data' -l '$pg_dir/log' -w -o \"-h 127.0.0.1 -p $pg_port -k '$pg_dir' -c fsync=off -c max_connections=300 $pg_tls\" start >/dev/null"
  cleanup() {
    as_owner "'$pg_bin/pg_ctl' -D '$pg_dir/data' -m immediate stop >/dev/null 2>&1" || true
    rm -rf "$pg_dir"
  }
  trap cleanup EXIT
  export KURYR_TEST_DATABASE_URL="postgres://postgres@127.0.0.1:$pg_port/postgres"
fi

# The browser test (tests/browser.rs) drives headless Chromium through chromedriver, and fails
# without them: install them when missing, as PostgreSQL above.
if ! command -v chromedriver >/dev/null 2>&1 || ! command -v chromium >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    step "installing Chromium and chromedriver (the browser test)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends chromium chromium-driver >/dev/null
  else
    echo "Chromium or chromedriver is missing; the browser test (tests/browser.rs) needs both:" >&2
    echo "install them (Debian: apt-get install chromium chromium-driver)." >&2
    exit 2
  fi
fi

# The cluster test (tests/cluster.rs) puts HAProxy in front of three servers, and fails without
# it: install it when missing, as PostgreSQL above.
if ! command -v haproxy >/dev/null 2>&1; then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    step "installing HAProxy (the cluster test)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends haproxy >/dev/null
  else
    echo "HAProxy is missing; the cluster test (tests/cluster.rs) needs it:" >&2
    echo "install it (Debian: apt-get install haproxy)." >&2
    exit 2
  fi
fi

step "tests on SQLite"
KURYR_TEST_DATABASE_URL= cargo test --locked "$@"

step "database tests on PostgreSQL"
cargo test --locked --test api --test durability --test events --test cluster "$@"

# The clients generated from openapi.yaml, checked strictly, each playing a whole game of every
# game against the real server (docs/clients.md).
step "generated clients (Python, TypeScript) against the server"
clients/test.sh
