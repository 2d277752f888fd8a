#!/usr/bin/env bash
# The load numbers of docs/service.md. For each store mode (in memory, Redis exact, synchronized, leased) one
# `serve --bench-bare` process, and against it, alternating in the same run, the bare endpoint and the real one:
#   HTTP  wrk on POST /bench/bare and POST /json, the same body, client ids cycling through $CLIENTS (json.lua);
#   gRPC  the jar's load command on sluice.bench.Bare/ShouldRateLimit and on ShouldRateLimit, the same requests.
# Prints every measurement, then a Markdown table of the means with each endpoint's ratio to the bare one.
#
# Needs a built jar (mvn -B -q package -DskipTests -pl sluice-server -am), wrk and redis-server
# (apt-get install wrk redis-server). Everything runs on this machine: the load generators share its cores with
# the service, the same for the bare endpoint and the real one.
set -euo pipefail
cd "$(dirname "$0")/../.."

JAR=sluice-server/target/sluice-server.jar
LUA=sluice-server/load/json.lua
DURATION=${DURATION:-10}        # seconds measured per run
WARMUP=${WARMUP:-5}             # seconds of warm-up: of each mode's server, and of each load client's JVM
ROUNDS=${ROUNDS:-2}             # bare/real pairs per mode and transport
CONNECTIONS=${CONNECTIONS:-16}  # wrk connections, and concurrent gRPC callers
CHANNELS=${CHANNELS:-4}         # gRPC connections the callers share
export CLIENTS=${CLIENTS:-10000}
HTTP_PORT=${HTTP_PORT:-18480}
GRPC_PORT=${GRPC_PORT:-18481}
REDIS_PORT=${REDIS_PORT:-16390}
MODES=${MODES:-"memory redis redis-sync redis-leased"}

for tool in java wrk redis-server redis-cli curl; do
  command -v "$tool" >/dev/null || { echo "run.sh: $tool is missing (apt-get install wrk redis-server curl)" >&2; exit 2; }
done
[ -f "$JAR" ] || { echo "run.sh: $JAR is missing: mvn -B -q package -DskipTests -pl sluice-server -am" >&2; exit 2; }

work=$(mktemp -d)
server_pid=
redis_pid=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

to_ms() { # wrk's latency (850.00us, 1.21ms, 1.02s) in milliseconds
  awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n *= 1; else if (v ~ /s$/) n *= 1000; printf "%.3f", n }'
}

results="$work/results"
: >"$results"

measure_http() { # mode round path name
  local out="$work/wrk.txt"
  wrk -t2 -c"$CONNECTIONS" -d"${DURATION}s" --latency -s "$LUA" "http://127.0.0.1:$HTTP_PORT$3" >"$out"
  local rps p50 p99 non2xx
  rps=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$out")
  p50=$(to_ms "$(awk '$1 == "50%" { print $2 }' "$out")")
  p99=$(to_ms "$(awk '$1 == "99%" { print $2 }' "$out")")
  non2xx=$(awk '/Non-2xx/ { print $NF }' "$out")
  echo "$1 http $4 $2 $rps $p50 $p99 non2xx=${non2xx:-0}" | tee -a "$results"
}

measure_grpc() { # mode round name [--bare]
  local out
  out=$(java -jar "$JAR" load --target "127.0.0.1:$GRPC_PORT" --streams "$CONNECTIONS" --channels "$CHANNELS" \
    --clients "$CLIENTS" --warmup "${WARMUP}s" --duration "${DURATION}s" ${4:-} || true)
  echo "$out" | sed -E 's/.*: ([0-9]+) checks\/s, latency ms p50 ([0-9.]+) p99 ([0-9.]+) .*OVER_LIMIT ([0-9]+), errors ([0-9]+)$/\1 \2 \3 over=\4 errors=\5/' |
    awk -v m="$1" -v r="$2" -v n="$3" '{ print m, "grpc", n, r, $1, $2, $3, $4, $5 }' | tee -a "$results"
}

start_redis() {
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no >"$work/redis.log" 2>&1 &
  redis_pid=$!
  for _ in $(seq 100); do redis-cli -p "$REDIS_PORT" ping >/dev/null 2>&1 && return; sleep 0.1; done
  echo "run.sh: redis-server did not start: $(cat "$work/redis.log")" >&2
  exit 3
}

start_server() { # store args...
  java -jar "$JAR" serve --bench-bare --http-port "$HTTP_PORT" --grpc-port "$GRPC_PORT" "$@" >"$work/serve.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 300); do
    curl -sf "http://127.0.0.1:$HTTP_PORT/healthcheck" >/dev/null 2>&1 && return
    sleep 0.1
  done
  echo "run.sh: serve $* did not start: $(cat "$work/serve.log")" >&2
  exit 3
}

stop_server() {
  kill "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=
}

echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
  "$(java -version 2>&1 | head -1), $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2), $(redis-server --version | cut -d' ' -f1-3)"
echo "# ${DURATION}s per run, ${ROUNDS} rounds, ${CONNECTIONS} connections/callers, ${CLIENTS} client ids"
echo "# mode transport endpoint round checks/s p50_ms p99_ms"
for mode in $MODES; do
  case "$mode" in
    memory) start_server ;;
    redis) start_redis; start_server --store "redis://127.0.0.1:$REDIS_PORT" ;;
    redis-sync) start_redis; start_server --store "redis://127.0.0.1:$REDIS_PORT" --store-mode synchronized --store-interval 100ms ;;
    redis-leased) start_redis; start_server --store "redis://127.0.0.1:$REDIS_PORT" --store-mode leased --store-interval 100ms ;;
    *) echo "run.sh: unknown mode $mode" >&2; exit 2 ;;
  esac
  # warm the server: both endpoints, both transports
  for path in /bench/bare /json; do
    wrk -t2 -c"$CONNECTIONS" -d"${WARMUP}s" -s "$LUA" "http://127.0.0.1:$HTTP_PORT$path" >/dev/null
  done
  java -jar "$JAR" load --target "127.0.0.1:$GRPC_PORT" --warmup 1s --duration "${WARMUP}s" >/dev/null
  for round in $(seq "$ROUNDS"); do
    measure_http "$mode" "$round" /bench/bare bare
    measure_http "$mode" "$round" /json json
    measure_grpc "$mode" "$round" bare --bare
    measure_grpc "$mode" "$round" ShouldRateLimit
  done
  stop_server
  if [ -n "$redis_pid" ]; then
    kill "$redis_pid"; wait "$redis_pid" 2>/dev/null || true; redis_pid=
  fi
done

echo
echo "| store | transport | endpoint | checks/s | p50 ms | p99 ms | × bare | × bare, each round |"
echo "|---|---|---|--:|--:|--:|--:|--:|"
awk '
  { k = $1 " " $2 " " $3; n[k]++; rps[k] += $5; p50[k] += $6; p99[k] += $7; round[k, $4] = $5
    if (!(k in seen)) { seen[k] = 1; order[++count] = k } }
  END {
    for (i = 1; i <= count; i++) {
      k = order[i]; split(k, f, " "); bare = f[1] " " f[2] " bare"; ratio = ""; rounds = ""
      if (f[3] != "bare") {
        ratio = sprintf("%.2f", rps[k] / rps[bare])
        for (r = 1; r <= n[k]; r++) rounds = rounds (r > 1 ? ", " : "") sprintf("%.2f", round[k, r] / round[bare, r])
      }
      printf "| %s | %s | %s | %.0f | %.2f | %.2f | %s | %s |\n", f[1], f[2], f[3], rps[k] / n[k], p50[k] / n[k],
        p99[k] / n[k], ratio, rounds
    }
  }' "$results"
