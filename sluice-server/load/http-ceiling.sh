#!/usr/bin/env bash
# The HTTP server against its ceiling, in one run on this machine: wrk on nginx's `return 200` (the loopback's ceiling
# for an HTTP/1.1 answer), on the bare endpoint of this jar (POST /bench/bare) and of another jar (OTHER_JAR, e.g. an
# earlier build), and on POST /json in memory of both; the same wrk, connections and body (json.lua), alternating,
# ROUNDS times. Prints every measurement and a Markdown table of the medians with the ratios.
#
# Needs the jar (mvn -B -q package -DskipTests -pl sluice-server -am), wrk and nginx (apt-get install wrk
# nginx-light). Loopback only; every run is bounded by its duration.
set -euo pipefail
cd "$(dirname "$0")/../.."
. sluice-server/load/nginx.sh

JAR=${JAR:-sluice-server/target/sluice-server.jar}
OTHER_JAR=${OTHER_JAR:-}
LUA=sluice-server/load/json.lua
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-5}
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-16}
THREADS=${THREADS:-2}
export CLIENTS=${CLIENTS:-10000}
NGINX_PORT=${NGINX_PORT:-18580}
PORT=${PORT:-18581}
OTHER_PORT=${OTHER_PORT:-18583}

for tool in java wrk nginx curl; do
  command -v "$tool" >/dev/null || { echo "http-ceiling.sh: $tool is missing (apt-get install wrk nginx-light curl)" >&2; exit 2; }
done

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  stop_nginx "$work"
  rm -rf "$work"
}
trap cleanup EXIT

start_nginx "$work" "$NGINX_PORT"

start() { # jar http-port
  java -jar "$1" serve --bench-bare --http-port "$2" --grpc-port $(($2 + 1)) >"$work/serve-$2.log" 2>&1 &
  pids+=($!)
  for _ in $(seq 300); do
    curl -sf "http://127.0.0.1:$2/healthcheck" >/dev/null 2>&1 && return
    sleep 0.1
  done
  echo "http-ceiling.sh: the service on $2 did not start: $(cat "$work/serve-$2.log")" >&2
  exit 3
}
start "$JAR" "$PORT"
[ -n "$OTHER_JAR" ] && start "$OTHER_JAR" "$OTHER_PORT"

targets=("nginx http://127.0.0.1:$NGINX_PORT/bench/bare" "bare http://127.0.0.1:$PORT/bench/bare"
  "json http://127.0.0.1:$PORT/json")
[ -n "$OTHER_JAR" ] && targets+=("other-bare http://127.0.0.1:$OTHER_PORT/bench/bare"
  "other-json http://127.0.0.1:$OTHER_PORT/json")

for t in "${targets[@]}"; do # warm-up, unmeasured
  wrk -t"$THREADS" -c"$CONNECTIONS" -d"${WARMUP}s" -s "$LUA" "${t#* }" >/dev/null
done

results="$work/results"
: >"$results"
for round in $(seq "$ROUNDS"); do
  for t in "${targets[@]}"; do
    out=$(wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$LUA" "${t#* }")
    rps=$(echo "$out" | awk '/^Requests\/sec:/ { printf "%.0f", $2 }')
    p50=$(echo "$out" | awk '$1 == "50%" { print $2 }')
    p99=$(echo "$out" | awk '$1 == "99%" { print $2 }')
    errors=$(echo "$out" | awk '/Socket errors|Non-2xx/ { printf "%s ", $0 }')
    echo "${t%% *} $round $rps p50=$p50 p99=$p99 ${errors}" | tee -a "$results"
  done
done

echo
echo "| target | requests/s (median of $ROUNDS) | × nginx | × its bare endpoint |"
echo "|---|--:|--:|--:|"
median() { awk -v n="$1" '$1 == n { print $3 }' "$results" | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
nginx=$(median nginx)
for t in "${targets[@]}"; do
  name=${t%% *}
  m=$(median "$name")
  bare=$(median "$([[ $name == other-* ]] && echo other-bare || echo bare)")
  awk -v n="$name" -v m="$m" -v g="$nginx" -v b="$bare" 'BEGIN { printf "| %s | %d | %.2f | %s |\n", n, m, m / g,
    (n ~ /json$/ ? sprintf("%.2f", m / b) : "") }'
done
