#!/usr/bin/env bash
# scripts/cluster-bench.sh [COUNTS...]: moves/s through HAProxy with 1, 2 and 3 Kuryr processes
# (or the COUNTS given) on one durable PostgreSQL (docs/deployment.md).
#
# For each count: N `kuryr serve` processes (the release binary) on one PostgreSQL cluster with
# fsync and synchronous_commit on (the shared harness's pg-start.sh with PG_DURABLE=1), HAProxy
# in front (roundrobin, health checks on /readyz, as deploy/haproxy.cfg), Cheversi games set up
# through HAProxy (the harness's setup_games.py), then wrk for DUR seconds through HAProxy with
# the harness's kuryr_moves.lua. Prints moves/s, p50 and p99 for each count.
#
# The players' addresses are not confirmed, so no move writes a turn mail (compare.sh's players
# have theirs confirmed): the figures are the move path through the balancer.
#
# Run from the project root after `cargo build --release`. Needs wrk, haproxy and Debian's
# postgresql. Environment: DUR (15), CONNS (64), MAX_RATE (5000: moves/s the games set up must
# last for), KURYR_BIN (target/release/kuryr, or under CARGO_TARGET_DIR).
set -euo pipefail
cd "$(dirname "$0")/.."
shared=$(cd ../shared/perf && pwd)
COUNTS=("$@"); [ "${#COUNTS[@]}" -gt 0 ] || COUNTS=(1 2 3)
DUR=${DUR:-15}; CONNS=${CONNS:-64}; MAX_RATE=${MAX_RATE:-5000}
KURYR_BIN=${KURYR_BIN:-${CARGO_TARGET_DIR:-target}/release/kuryr}
[ -x "$KURYR_BIN" ] || { echo "no $KURYR_BIN: run cargo build --release first" >&2; exit 2; }
for tool in wrk haproxy python3 curl; do
  command -v "$tool" >/dev/null || { echo "$tool is missing (Debian: apt-get install $tool)" >&2; exit 2; }
done

W=$(mktemp -d -t kuryr-cluster-bench.XXXXXX); chmod 755 "$W"
port() { python3 -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
pids=()
stop_all() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  pids=()
}
cleanup() {
  stop_all
  "$shared/pg-stop.sh" "$W/pg" >/dev/null 2>&1 || true
  rm -rf "$W"
}
trap cleanup EXIT

eval "$(PG_DURABLE=1 "$shared/pg-start.sh" "$W/pg" "$(port)" kuryr)"
export KURYR_JWT_SECRET="a-secret-for-the-cluster-benchmark-only-0123456789"
DATABASE_URL=$DATABASE_URL KURYR_DATA_DIR=$W/migrate "$KURYR_BIN" migrate >/dev/null

for n in "${COUNTS[@]}"; do
  servers=""
  for i in $(seq 1 "$n"); do
    p=$(port)
    # The load comes from two players through one balancer: the per-user and per-client limits
    # are policies, not costs.
    DATABASE_URL=$DATABASE_URL KURYR_LISTEN=127.0.0.1:$p KURYR_DATA_DIR=$W/data$n-$i \
      KURYR_NO_MIGRATE=true KURYR_TRUSTED_PROXIES=127.0.0.1/32 KURYR_LOG=warn \
      KURYR_LIMIT_REQUESTS_PER_USER=off KURYR_LIMIT_REGISTRATIONS_PER_CLIENT=off \
      "$KURYR_BIN" serve >"$W/kuryr$n-$i.log" 2>&1 &
    pids+=($!)
    servers+="    server k$i 127.0.0.1:$p"$'\n'
  done
  hp=$(port)
  cat >"$W/haproxy$n.cfg" <<EOF
global
    maxconn 4000
defaults
    mode http
    timeout connect 5s
    timeout client 60s
    timeout server 60s
    timeout check 3s
    retries 3
    option redispatch 1
frontend web
    bind 127.0.0.1:$hp
    option forwardfor
    default_backend kuryr
backend kuryr
    balance roundrobin
    option httpchk GET /readyz
    http-check expect status 200
    default-server check inter 500ms fall 2 rise 1
$servers
EOF
  haproxy -db -f "$W/haproxy$n.cfg" >"$W/haproxy$n.log" 2>&1 &
  pids+=($!)
  base=http://127.0.0.1:$hp
  # Up when HAProxy has answered /readyz from each process in turn.
  ok=0
  for _ in $(seq 1 300); do
    if [ "$(curl -s -o /dev/null -w '%{http_code}' "$base/readyz")" = 200 ]; then
      ok=$((ok + 1)); [ "$ok" -ge $((n * 3)) ] && break
    else
      ok=0
    fi
    sleep 0.1
  done
  [ "$ok" -ge $((n * 3)) ] || { echo "$n processes: HAProxy found no server up" >&2; exit 1; }
  games=$(( DUR * MAX_RATE / 16 + 200 ))
  eval "$(python3 "$shared/setup_games.py" "$base" "$games" "$W/games$n.txt")"
  out=$(MOVES=$MOVES TOKEN_W=$TOKEN_W TOKEN_B=$TOKEN_B GAMES_FILE=$W/games$n.txt \
    wrk -t2 -c"$CONNS" -d"${DUR}s" --latency -s "$shared/kuryr_moves.lua" "$base" 2>&1)
  rps=$(awk '/Requests\/sec/{print $2}' <<<"$out")
  p50=$(awk '$1=="50%"{print $2}' <<<"$out"); p99=$(awk '$1=="99%"{print $2}' <<<"$out")
  errors=$(awk '/Non-2xx/{print $NF}' <<<"$out"); idle=$(awk '/games out of moves/{print $NF}' <<<"$out")
  echo "$n process(es) behind HAProxy: $rps moves/s, p50 $p50, p99 $p99 (non-2xx ${errors:-0}${idle:+, idle requests $idle}; $CONNS connections, ${DUR}s)"
  stop_all
done
