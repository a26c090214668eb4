#!/usr/bin/env bash
# Throughput through HAProxy in front of 1, then 3, "gatehouse serve"
# processes on one PostgreSQL database, on loopback: GET /api/auth/get-session
# (with one user's cookie) and GET /api/auth/ok, measured by wrk. The
# replicas, HAProxy and wrk share the machine's CPUs, so compare the rows of
# one run, on a quiet machine, as ratios.
#
#   make bench-replicas
#   REPLICAS="1 2 3" DURATION=20 CONC=64 scripts/bench-replicas.sh
#
# Env: REPLICAS="1 3"  DURATION=10 (s per route)  WARMUP=2 (s, discarded)
#      CONC=32 (connections)  THREADS=1 (wrk threads)  PORT=3300 (HAProxy;
#      replicas on the ports after it)  LOADGEN_CPUS (taskset -c for wrk)
#      GATEHOUSE_TEST_POSTGRES_URL (the server; a database of the run's own
#      is created there and dropped after)  REDIS_URL (GATEHOUSE_REDIS_URL of
#      the replicas; unset: none)  RATE_LIMIT=off (as the side-by-side run)
# Needs haproxy, wrk, curl and psql (Debian packages haproxy, wrk, curl,
# postgresql-client).
set -euo pipefail
cd "$(dirname "$0")/.."

REPLICAS=${REPLICAS:-1 3}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
CONC=${CONC:-32}
THREADS=${THREADS:-1}
PORT=${PORT:-3300}
RATE_LIMIT=${RATE_LIMIT:-off}
PG=${GATEHOUSE_TEST_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432/test?sslmode=disable}

for tool in haproxy wrk curl psql; do
  command -v "$tool" >/dev/null || { echo "bench-replicas: needs $tool" >&2; exit 2; }
done
WRK=(wrk)
[ -n "${LOADGEN_CPUS:-}" ] && WRK=(taskset -c "$LOADGEN_CPUS" wrk)

W=$(mktemp -d)
DB=gatehouse_replicas_$$
PIDS=()
stop_all() {
  local p
  for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
  PIDS=()
}
cleanup() {
  stop_all
  psql "$PG" -qtAc "drop database if exists $DB" >/dev/null 2>&1 || true
  rm -rf "$W"
}
trap cleanup EXIT

CGO_ENABLED=0 go build -trimpath -o "$W/gatehouse" ./cmd/gatehouse
psql "$PG" -qtAc "create database $DB" >/dev/null
base=${PG%%\?*}
DBURL="${base%/*}/$DB"
[ "$base" != "$PG" ] && DBURL="$DBURL?${PG#*\?}"
LB="http://127.0.0.1:$PORT"

# wait_ok URL PID: wait until URL/api/auth/ok answers, or fail if PID died.
wait_ok() {
  for _ in $(seq 300); do
    curl -fsS --max-time 1 "$1/api/auth/ok" >/dev/null 2>&1 && return 0
    kill -0 "$2" 2>/dev/null || { echo "bench-replicas: process $2 exited; logs in $W" >&2; cat "$W"/*.log >&2; exit 1; }
    sleep 0.1
  done
  echo "bench-replicas: $1 did not answer" >&2; exit 1
}

# start_replica I: the I-th replica, on PORT+I, every one with the same
# secret, database and base URL (HAProxy's).
start_replica() {
  local i=$1 dir="$W/data$1"
  mkdir -p "$dir"
  env GATEHOUSE_ADDR="127.0.0.1:$((PORT + i))" GATEHOUSE_BASE_URL="$LB" GATEHOUSE_DATA_DIR="$dir" \
    GATEHOUSE_DATABASE_URL="$DBURL" GATEHOUSE_SECRET=bench-only-secret-0123456789abcdef0123456789abcdef \
    GATEHOUSE_TRUSTED_PROXIES=127.0.0.1/32 GATEHOUSE_RATE_LIMIT="$RATE_LIMIT" GATEHOUSE_LOCKOUT_THRESHOLD=0 \
    GATEHOUSE_REQUIRE_EMAIL_VERIFICATION=false GATEHOUSE_LOG_LEVEL=warn ${REDIS_URL:+GATEHOUSE_REDIS_URL=$REDIS_URL} \
    "$W/gatehouse" serve >"$W/replica$i.log" 2>&1 &
  PIDS+=($!)
  wait_ok "http://127.0.0.1:$((PORT + i))" "$!"
}

# start_haproxy N: HAProxy on PORT in front of replicas 1..N, as
# deploy/haproxy.cfg does it (round robin, health checks, X-Forwarded-For).
start_haproxy() {
  local n=$1 i
  {
    printf 'global\n    maxconn 4096\n\ndefaults\n    mode http\n    timeout connect 2s\n    timeout client 30s\n    timeout server 30s\n'
    printf '    option http-keep-alive\n\nfrontend gatehouse\n    bind 127.0.0.1:%d\n    default_backend replicas\n\n' "$PORT"
    printf 'backend replicas\n    balance roundrobin\n    option forwardfor\n    option httpchk GET /api/auth/ok\n'
    printf '    http-check expect status 200\n    default-server inter 1s fall 2 rise 1\n'
    for i in $(seq "$n"); do printf '    server r%d 127.0.0.1:%d check\n' "$i" "$((PORT + i))"; done
  } >"$W/haproxy.cfg"
  haproxy -db -f "$W/haproxy.cfg" >"$W/haproxy.log" 2>&1 &
  PIDS+=($!)
  wait_ok "$LB" "$!"
}

cat >"$W/stats.lua" <<'LUA'
function done(summary, latency, requests)
  io.write(string.format("BENCH %d %d %d %d %d\n", summary.requests, summary.duration,
    latency:percentile(50), latency:percentile(99), summary.errors.status))
end
LUA

# measure LABEL PATH [HEADER]: a warm-up, then DURATION s of wrk; prints a row.
measure() {
  local label=$1 path=$2 header=${3:-}
  local args=(-t"$THREADS" -c"$CONC" --timeout 10s -s "$W/stats.lua")
  [ -n "$header" ] && args+=(-H "$header")
  "${WRK[@]}" "${args[@]}" -d"${WARMUP}s" "$LB$path" >/dev/null
  local line
  line=$("${WRK[@]}" "${args[@]}" -d"${DURATION}s" "$LB$path" | grep '^BENCH ')
  # shellcheck disable=SC2086
  set -- $line
  awk -v l="$label" -v r="$2" -v d="$3" -v p50="$4" -v p99="$5" -v e="$6" \
    'BEGIN { printf "%-22s %10.0f %9.2f %9.2f %7d\n", l, r / (d / 1e6), p50 / 1000, p99 / 1000, e }'
}

printf '%-22s %10s %9s %9s %7s\n' "replicas / route" "req/s" "p50 ms" "p99 ms" "non-2xx"
for n in $REPLICAS; do
  for i in $(seq "$n"); do start_replica "$i"; done
  start_haproxy "$n"
  email="bench-$n-$$@example.test"
  curl -fsS -o /dev/null -H 'Content-Type: application/json' -H "Origin: $LB" \
    -d "{\"email\":\"$email\",\"password\":\"bench-Password-123456\",\"name\":\"Bench\"}" "$LB/api/auth/sign-up/email"
  cookie=$(curl -fsS -D - -o /dev/null -H 'Content-Type: application/json' -H "Origin: $LB" \
    -d "{\"email\":\"$email\",\"password\":\"bench-Password-123456\"}" "$LB/api/auth/sign-in/email" |
    awk 'tolower($1) == "set-cookie:" { sub(/;.*/, "", $2); printf "%s%s", sep, $2; sep = "; " }')
  [ -n "$cookie" ] || { echo "bench-replicas: sign-in set no cookie" >&2; exit 1; }
  curl -fsS -H "Cookie: $cookie" "$LB/api/auth/get-session" | grep -q '"user"' ||
    { echo "bench-replicas: get-session with the cookie has no user" >&2; exit 1; }
  measure "$n / get-session" /api/auth/get-session "Cookie: $cookie"
  measure "$n / ok" /api/auth/ok
  stop_all
done
