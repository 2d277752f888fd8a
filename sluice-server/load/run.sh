#!/usr/bin/env bash
# The load numbers of docs/service.md: the service against its stack's ceilings, in one run on this machine.
#
# For each store mode (MODES) and each jar (JAR, and BEFORE_JAR if given, e.g. an earlier build), one
# `serve --bench-bare` process, warmed until its JIT compilers settle (warm_up), and against it, alternating, ROUNDS
# times:
#   gRPC  h2load (a C client that does not cap the rate) on sluice.bench.Bare/ShouldRateLimit and on
#         ShouldRateLimit: the same gRPC frame (one hot key, client_id=client-1), STREAMS streams over CHANNELS
#         connections; in exact mode on Redis also 64 streams; p50/p99 from h2load's per-request log;
#         MODES may add redis-cache: exact mode on Redis with --over-limit-cache 10000, and postgres: exact
#         mode on PostgreSQL (an embedded PostgreSQL 15 started from the benchmarks jar, as run-postgres.sh does),
#         and mongodb: exact mode on MongoDB (mongo-java-server in a JVM of its own, started from the benchmarks jar:
#         no MongoDB server runs on the build machine, so its figures are that server's, not MongoDB's);
#   HTTP  wrk on POST /bench/bare and POST /json, the same body, client ids cycling through $CLIENTS (json.lua);
#   h2c   h2load on POST /bench/bare and POST /json over cleartext HTTP/2 (prior knowledge) on the HTTP port, one
#         JSON body (client_id=client-1, as the gRPC frame), the gRPC runs' streams and connections (a jar from
#         before h2c answers none of it: its rows read 0).
# And the ceilings, in the same run: nginx `return 200` under the same wrk (HTTP) and h2load (h2c), and
# redis-benchmark EVALSHA of a
# one-line script (the store). For the Redis modes, Redis's CPU per decision: the redis-server process's CPU time and
# INFO commandstats over each measured gRPC run, divided by the checks h2load completed; for PostgreSQL, the CPU time
# of all its processes and its committed transactions (pg_stat_database) per check; for MongoDB, its JVM's CPU time
# per check.
# Prints every measurement, then Markdown tables of the medians with the ratios.
#
# Needs a built jar (mvn -B -q package -DskipTests -pl sluice-server -am), h2load, wrk, nginx, redis-server and
# redis-benchmark: apt-get install nghttp2-client wrk nginx-light redis-server redis-tools; the postgres mode also the
# benchmarks jar (mvn -B -q package -DskipTests -pl sluice-bench -am) and psql (postgresql-client); the mongodb mode
# the benchmarks jar.
set -euo pipefail
cd "$(dirname "$0")/../.."
. sluice-server/load/nginx.sh

JAR=${JAR:-sluice-server/target/sluice-server.jar}
BEFORE_JAR=${BEFORE_JAR:-}
LUA=sluice-server/load/json.lua
DURATION=${DURATION:-10}        # seconds measured per run
WARMUP=${WARMUP:-3}             # seconds of each warm-up load, per endpoint and transport (a pass: all four)
WARM_PASSES=${WARM_PASSES:-10}  # warm-up passes at most: until the JIT compilers settle (JIT_SETTLED)
JIT_SETTLED=${JIT_SETTLED:-2}   # a pass is the last when the JIT compiled for less than this % of its time
ROUNDS=${ROUNDS:-3}             # rounds per mode and jar; the tables give medians
STREAMS=${STREAMS:-16}          # concurrent gRPC streams, and wrk connections
CHANNELS=${CHANNELS:-4}         # gRPC connections the streams share
export CLIENTS=${CLIENTS:-10000}
HTTP_PORT=${HTTP_PORT:-18480}
GRPC_PORT=${GRPC_PORT:-18481}
REDIS_PORT=${REDIS_PORT:-16390}
NGINX_PORT=${NGINX_PORT:-18580}
MODES=${MODES:-"memory redis redis-sync redis-leased"}
BENCH_JAR=${BENCH_JAR:-sluice-bench/target/benchmarks.jar}

command -v jcmd >/dev/null || {
  echo "run.sh: jcmd is missing: it comes with a JDK, not a JRE (apt-get install openjdk-17-jdk-headless)" >&2
  exit 2
}
for tool in java h2load wrk nginx redis-server redis-cli redis-benchmark curl python3; do
  command -v "$tool" >/dev/null || {
    echo "run.sh: $tool is missing (apt-get install nghttp2-client wrk nginx-light redis-server redis-tools curl)" >&2
    exit 2
  }
done
for j in "$JAR" $BEFORE_JAR; do
  [ -f "$j" ] || { echo "run.sh: $j is missing: mvn -B -q package -DskipTests -pl sluice-server -am" >&2; exit 2; }
done

work=$(mktemp -d)
server_pid=
redis_pid=
pg_port=
mongo_pid=
mongo_uri=
cleanup() {
  [ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
  stop_postgres
  stop_mongodb
  [ -n "$redis_pid" ] && kill "$redis_pid" 2>/dev/null && wait "$redis_pid" 2>/dev/null || true
  stop_nginx "$work"
  rm -rf "$work"
}
trap cleanup EXIT

# The gRPC frame h2load sends: no compression, the length, then a RateLimitRequest (domain oauth-token, one
# descriptor client_id=client-1), encoded by hand.
python3 - "$work/frame.bin" <<'EOF'
import struct, sys
def field(n, b): return bytes([n << 3 | 2, len(b)]) + b
entry = field(1, b"client_id") + field(2, b"client-1")
msg = field(1, b"oauth-token") + field(2, field(1, entry))
open(sys.argv[1], "wb").write(b"\0" + struct.pack(">I", len(msg)) + msg)
EOF
printf '%s' '{"domain":"oauth-token","descriptors":[{"entries":[{"key":"client_id","value":"client-1"}]}]}' >"$work/body.json"

to_ms() { # wrk's latency (850.00us, 1.21ms, 1.02s) in milliseconds
  awk -v v="$1" 'BEGIN { n = v + 0; if (v ~ /us$/) n /= 1000; else if (v ~ /ms$/) n *= 1; else if (v ~ /s$/) n *= 1000; printf "%.3f", n }'
}

results="$work/results"
: >"$results"

measure_http() { # label round url name
  local out="$work/wrk.txt"
  wrk -t2 -c"$STREAMS" -d"${DURATION}s" --latency -s "$LUA" "$3" >"$out"
  local rps p50 p99 non2xx
  rps=$(awk '/^Requests\/sec:/ { printf "%.0f", $2 }' "$out")
  p50=$(to_ms "$(awk '$1 == "50%" { print $2 }' "$out")")
  p99=$(to_ms "$(awk '$1 == "99%" { print $2 }' "$out")")
  non2xx=$(awk '/Non-2xx/ { print $NF }' "$out")
  echo "$1 http $4 $2 $rps $p50 $p99 non2xx=${non2xx:-0}" | tee -a "$results"
}

redis_cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$redis_pid/stat"; }
redis_evalsha() { redis-cli -p "$REDIS_PORT" info commandstats | tr -d '\r' |
  awk -F'[:=,]' '$1 == "cmdstat_evalsha" { c = $3; u = $5 } END { print (c ? c : 0), (u ? u : 0) }'; }

# PostgreSQL's CPU time: its postmaster (the one started with -p $pg_port) and the processes it forked (the backends
# are the pool's connections, kept for the run); other PostgreSQL servers on the machine are not counted
pg_cpu_ticks() {
  local t=0 p master=
  for p in /proc/[0-9]*; do
    [ "$(cat "$p/comm" 2>/dev/null)" = postgres ] || continue
    tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -q -- "-p $pg_port" && { master=${p#/proc/}; break; }
  done
  [ -n "$master" ] || { echo 0; return; }
  for p in /proc/[0-9]*; do
    [ "$(cat "$p/comm" 2>/dev/null)" = postgres ] || continue
    awk -v m="$master" -v me="${p#/proc/}" '$4 == m || me == m { print $14 + $15 }' "$p/stat" 2>/dev/null
  done | awk -v t=0 '{ t += $1 } END { print t + 0 }'
}
pg_commits() { psql -h 127.0.0.1 -p "$pg_port" -U postgres -d postgres -Atc \
  "SELECT xact_commit FROM pg_stat_database WHERE datname = 'postgres'"; }

h2load_result() { # out log: requests done, those with a 2xx, their rate, p50 and p99 in ms from the per-request log
  local done ok rps
  done=$(awk '/^requests:/ { print $6 }' "$1")
  ok=$(awk '/^requests:/ { print $8 }' "$1")
  rps=$(awk '/^finished in/ { gsub(",", "", $4); printf "%.0f", $4 }' "$1")
  echo "${done:-0} ${ok:-0} ${rps:-0} $(awk '{ print $3 }' "$2" | sort -n |
    awk '{ v[NR] = $1 } END { if (NR) printf "%.3f %.3f\n", v[int(NR * 0.5 + 0.5)] / 1000, v[int(NR * 0.99 + 0.5)] / 1000; else print "0 0" }')"
}

# HTTP/2 over cleartext (h2c, prior knowledge) on the HTTP port: h2load, as for gRPC, with the same streams over the
# same connections, POSTing one JSON body (client-1, as the gRPC frame); 429s count as done, as gRPC's OVER_LIMIT does
measure_h2c() { # label round url name
  local log="$work/h2load.log" out="$work/h2load.txt" done ok rps p50 p99
  rm -f "$log" # h2load appends to its log
  h2load -D "$DURATION" --warm-up-time=1 -c "$CHANNELS" -m $((STREAMS / CHANNELS)) -t 1 \
    -H 'content-type: application/json' -d "$work/body.json" --log-file="$log" "$3" >"$out" 2>&1 || true
  read -r done ok rps p50 p99 < <(h2load_result "$out" "$log")
  echo "$1 h2c $4 $2 $rps $p50 $p99 done=$done 2xx=$ok" | tee -a "$results"
}

measure_grpc() { # label round method name streams
  local log="$work/h2load.log" out="$work/h2load.txt" streams=$5
  local ticks0 calls0 usec0
  if [ -n "$redis_pid" ]; then ticks0=$(redis_cpu_ticks); read -r calls0 usec0 < <(redis_evalsha); fi
  if [ -n "$pg_port" ]; then ticks0=$(pg_cpu_ticks); calls0=$(pg_commits); fi
  if [ -n "$mongo_pid" ]; then ticks0=$(mongo_cpu_ticks); fi
  rm -f "$log" # h2load appends to its log: without this, p50 and p99 would be those of every run so far
  h2load -D "$DURATION" --warm-up-time=1 -c "$CHANNELS" -m $((streams / CHANNELS)) -t 1 \
    -H 'content-type: application/grpc' -H 'te: trailers' -d "$work/frame.bin" --log-file="$log" \
    "http://127.0.0.1:$GRPC_PORT/$3" >"$out" 2>&1 || true
  local all done rps p50 p99 extra=""
  read -r all done rps p50 p99 < <(h2load_result "$out" "$log") # a gRPC answer is a 2xx, OVER_LIMIT too
  if [ -n "$redis_pid" ] && [ "${done:-0}" -gt 0 ]; then
    local ticks1 calls1 usec1 hz
    ticks1=$(redis_cpu_ticks); read -r calls1 usec1 < <(redis_evalsha); hz=$(getconf CLK_TCK)
    extra=$(awk -v t=$((ticks1 - ticks0)) -v hz="$hz" -v c=$((calls1 - calls0)) -v u=$((usec1 - usec0)) -v d="$done" \
      'BEGIN { printf "redis_cpu_us/decision=%.2f evalsha/decision=%.3f evalsha_us/decision=%.2f", t * 1e6 / hz / d, c / d, u / d }')
  fi
  if [ -n "$pg_port" ] && [ "${done:-0}" -gt 0 ]; then
    local ticks1 calls1 hz
    ticks1=$(pg_cpu_ticks); calls1=$(pg_commits); hz=$(getconf CLK_TCK)
    extra=$(awk -v t=$((ticks1 - ticks0)) -v hz="$hz" -v c=$((calls1 - calls0)) -v d="$done" \
      'BEGIN { printf "store_cpu_us/decision=%.2f commits/decision=%.3f", t * 1e6 / hz / d, c / d }')
  fi
  if [ -n "$mongo_pid" ] && [ "${done:-0}" -gt 0 ]; then
    local ticks1 hz
    ticks1=$(mongo_cpu_ticks); hz=$(getconf CLK_TCK)
    extra=$(awk -v t=$((ticks1 - ticks0)) -v hz="$hz" -v d="$done" 'BEGIN { printf "store_cpu_us/decision=%.2f", t * 1e6 / hz / d }')
  fi
  echo "$1 grpc $4 $2 $rps $p50 $p99 succeeded=${done:-0} $extra" | tee -a "$results"
}

start_redis() {
  redis-server --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no >"$work/redis.log" 2>&1 &
  redis_pid=$!
  local answering
  for _ in $(seq 100); do
    answering=$(redis-cli -p "$REDIS_PORT" info server 2>/dev/null | tr -d '\r' |
      awk -F: '$1 == "process_id" { print $2 }') || true # refused until it listens
    if [ -n "$answering" ]; then
      [ "$answering" = "$redis_pid" ] && return
      # another server answers on the port: its figures would not be this run's
      echo "run.sh: another redis-server (process $answering) answers on port $REDIS_PORT: stop it, or set REDIS_PORT" >&2
      redis_pid=
      exit 3
    fi
    sleep 0.1
  done
  echo "run.sh: redis-server did not start on port $REDIS_PORT (REDIS_PORT): $(cat "$work/redis.log")" >&2
  redis_pid=
  exit 3
}

stop_redis() {
  if [ -n "$redis_pid" ]; then kill "$redis_pid"; wait "$redis_pid" 2>/dev/null || true; redis_pid=; fi
}

start_postgres() {
  [ -f "$BENCH_JAR" ] || { echo "run.sh: $BENCH_JAR is missing: mvn -B -q package -DskipTests -pl sluice-bench -am" >&2; exit 2; }
  command -v psql >/dev/null || { echo "run.sh: psql is missing (apt-get install postgresql-client)" >&2; exit 2; }
  coproc PG { java -cp "$BENCH_JAR" dev.sluice.bench.postgres.PostgresServerMain 2>"$work/postgres.log"; }
  local url
  read -r -u "${PG[0]}" url || { echo "run.sh: PostgreSQL did not start: $(cat "$work/postgres.log")" >&2; exit 3; }
  pg_port=$(echo "$url" | sed -E 's|^jdbc:postgresql://[^:/]+:([0-9]+)/.*|\1|')
}

stop_postgres() {
  if [ -n "$pg_port" ]; then exec {PG[1]}>&-; wait "$PG_PID" 2>/dev/null || true; pg_port=; fi
}

# mongo-java-server in a JVM of its own (exec: the coprocess is that JVM, so its CPU time is the server's)
start_mongodb() {
  [ -f "$BENCH_JAR" ] || { echo "run.sh: $BENCH_JAR is missing: mvn -B -q package -DskipTests -pl sluice-bench -am" >&2; exit 2; }
  coproc MONGO { exec java -cp "$BENCH_JAR" dev.sluice.bench.mongodb.MongoServerMain 2>"$work/mongodb.log"; }
  read -r -u "${MONGO[0]}" mongo_uri || { echo "run.sh: MongoDB did not start: $(cat "$work/mongodb.log")" >&2; exit 3; }
  mongo_pid=$MONGO_PID
}

stop_mongodb() {
  if [ -n "$mongo_pid" ]; then exec {MONGO[1]}>&-; wait "$mongo_pid" 2>/dev/null || true; mongo_pid=; mongo_uri=; fi
}

mongo_cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$mongo_pid/stat"; }

start_server() { # jar store args...
  local jar=$1
  shift
  java -jar "$jar" serve --bench-bare --http-port "$HTTP_PORT" --grpc-port "$GRPC_PORT" "$@" >"$work/serve.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 300); do
    curl -sf "http://127.0.0.1:$HTTP_PORT/healthcheck" >/dev/null 2>&1 && return
    sleep 0.1
  done
  echo "run.sh: serve $* did not start: $(cat "$work/serve.log")" >&2
  exit 3
}

# The JIT compilers' time so far in the server's JVM, in milliseconds (its HotSpot counters, read by jcmd)
jit_ms() {
  jcmd "$server_pid" PerfCounter.print 2>/dev/null |
    awk -F= '/^sun.os.hrt.frequency=/ { f = $2 } /^java.ci.totalTime=/ { t = $2 } END { printf "%.0f", f ? t * 1000 / f : 0 }'
}

# Warms the server: passes of both endpoints on both transports, WARMUP seconds each, until the JIT compilers took
# less than JIT_SETTLED % of a pass (or WARM_PASSES passes). A server measured while its compilers still run gives the
# path with more code (the check, against the bare endpoint) the larger share of the compilers' cost: tens of seconds
# of load here before they settle. Prints each pass's compile time, so the output shows how warm the server was.
warm_up() { # label
  local pass ms0 ms1 path method
  for pass in $(seq "$WARM_PASSES"); do
    ms0=$(jit_ms)
    for path in /bench/bare /json; do
      wrk -t2 -c"$STREAMS" -d"${WARMUP}s" -s "$LUA" "http://127.0.0.1:$HTTP_PORT$path" >/dev/null
    done
    for method in sluice.bench.Bare/ShouldRateLimit envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit; do
      h2load -D "$WARMUP" -c "$CHANNELS" -m $((STREAMS / CHANNELS)) -t 1 -H 'content-type: application/grpc' \
        -H 'te: trailers' -d "$work/frame.bin" "http://127.0.0.1:$GRPC_PORT/$method" >/dev/null 2>&1 || true
    done
    ms1=$(jit_ms)
    echo "# $1 warm-up pass $pass: the JIT compiled for $((ms1 - ms0)) ms of $((4 * WARMUP * 1000)) ms"
    # no reading (jcmd could not attach): every pass is run
    [ "$ms1" -gt 0 ] && [ $(((ms1 - ms0) * 100)) -lt $((JIT_SETTLED * 4 * WARMUP * 1000)) ] && return
  done
  # the loop's last test failed: without this the function's status stopped the script (set -e) with no word
  echo "# $1: the JIT had not settled after $WARM_PASSES passes; measuring anyway"
}

stop_server() {
  kill "$server_pid"
  wait "$server_pid" 2>/dev/null || true
  server_pid=
}

echo "# $(date -u +%Y-%m-%dT%H:%MZ), $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)," \
  "$(java -version 2>&1 | head -1), $(h2load --version 2>&1 | head -1), $(wrk --version 2>&1 | head -1 | cut -d' ' -f1-2)," \
  "$(nginx -v 2>&1), $(redis-server --version | cut -d' ' -f1-3)"
echo "# ${DURATION}s per run, ${ROUNDS} rounds, ${STREAMS} gRPC streams over ${CHANNELS} connections and ${STREAMS} wrk connections, ${CLIENTS} client ids over HTTP"
echo "# jars: after=$JAR${BEFORE_JAR:+ before=$BEFORE_JAR}"
echo "# label transport endpoint round checks/s p50_ms p99_ms ..."

# The ceilings: nginx under the same wrk, and Redis running a one-line script.
start_nginx "$work" "$NGINX_PORT"
wrk -t2 -c"$STREAMS" -d"${WARMUP}s" -s "$LUA" "http://127.0.0.1:$NGINX_PORT/bench/bare" >/dev/null
start_redis
sha=$(redis-cli -p "$REDIS_PORT" script load 'return 1')
for round in $(seq "$ROUNDS"); do
  measure_http ceiling "$round" "http://127.0.0.1:$NGINX_PORT/bench/bare" nginx
  measure_h2c ceiling "$round" "http://127.0.0.1:$((NGINX_PORT + 1))/bench/bare" nginx
  for c in "$STREAMS" 64; do
    rps=$(redis-benchmark -p "$REDIS_PORT" -c "$c" -n 300000 -q evalsha "$sha" 0 | tr '\r' '\n' |
      awk '/requests per second/ { for (i = 1; i <= NF; i++) if ($(i + 1) == "requests") { printf "%.0f", $i; exit } }')
    echo "ceiling redis evalsha-c$c $round $rps 0 0" | tee -a "$results"
  done
done
stop_redis
stop_nginx "$work"

jars=("after $JAR")
[ -n "$BEFORE_JAR" ] && jars=("before $BEFORE_JAR" "${jars[@]}")
for mode in $MODES; do
  for j in "${jars[@]}"; do
    name=${j%% *}
    jar=${j#* }
    label="$mode/$name"
    case "$mode" in
      memory) start_server "$jar" ;;
      redis) start_redis; start_server "$jar" --store "redis://127.0.0.1:$REDIS_PORT" ;;
      # exact mode with the over-limit cache (not in MODES by default: a jar before it has no such option)
      redis-cache) start_redis; start_server "$jar" --store "redis://127.0.0.1:$REDIS_PORT" --over-limit-cache 10000 ;;
      # --sync-interval and --lease-interval, not --store-mode: an earlier jar (BEFORE_JAR) knows only these
      postgres) start_postgres; start_server "$jar" --store "postgresql://postgres@127.0.0.1:$pg_port/postgres" ;;
      mongodb) start_mongodb; start_server "$jar" --store "$mongo_uri/sluice" ;;
      redis-sync) start_redis; start_server "$jar" --store "redis://127.0.0.1:$REDIS_PORT" --sync-interval 100ms ;;
      redis-leased) start_redis; start_server "$jar" --store "redis://127.0.0.1:$REDIS_PORT" --lease-interval 100ms ;;
      *) echo "run.sh: unknown mode $mode" >&2; exit 2 ;;
    esac
    warm_up "$label"
    for round in $(seq "$ROUNDS"); do
      measure_grpc "$label" "$round" sluice.bench.Bare/ShouldRateLimit bare "$STREAMS"
      measure_grpc "$label" "$round" envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit check "$STREAMS"
      if [ "$mode" = redis ] || [ "$mode" = redis-cache ] || [ "$mode" = postgres ] || [ "$mode" = mongodb ]; then
        measure_grpc "$label" "$round" sluice.bench.Bare/ShouldRateLimit bare-64 64
        measure_grpc "$label" "$round" envoy.service.ratelimit.v3.RateLimitService/ShouldRateLimit check-64 64
      fi
      measure_http "$label" "$round" "http://127.0.0.1:$HTTP_PORT/bench/bare" bare
      measure_http "$label" "$round" "http://127.0.0.1:$HTTP_PORT/json" json
      measure_h2c "$label" "$round" "http://127.0.0.1:$HTTP_PORT/bench/bare" bare
      measure_h2c "$label" "$round" "http://127.0.0.1:$HTTP_PORT/json" json
    done
    stop_server
    stop_redis
    stop_postgres
    stop_mongodb
  done
done

echo
echo "| run | transport | endpoint | checks/s (median) | p50 ms | p99 ms | × bare | × nginx | store CPU µs/check | store calls/check |"
echo "|---|---|---|--:|--:|--:|--:|--:|--:|--:|"
awk '
  function median(k,    i, j, t, m, a) { m = n[k]; for (i = 1; i <= m; i++) a[i] = v[k, i]
    for (i = 1; i <= m; i++) for (j = i + 1; j <= m; j++) if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
    return a[int((m + 1) / 2)] }
  { k = $1 " " $2 " " $3; n[k]++; v[k, n[k]] = $5; p50[k] += $6; p99[k] += $7
    for (i = 8; i <= NF; i++) { split($i, kv, "="); x[k, kv[1]] += kv[2] }
    if (!(k in seen)) { seen[k] = 1; order[++count] = k } }
  END {
    for (i = 1; i <= count; i++) {
      k = order[i]; split(k, f, " "); m = median(k)
      bare = f[1] " " f[2] " " (f[3] ~ /-64$/ ? "bare-64" : "bare"); ratio = ""; ng = ""
      if (f[3] !~ /^bare/ && f[1] != "ceiling" && (bare in seen)) ratio = sprintf("%.2f", m / median(bare))
      if (("ceiling " f[2] " nginx") in seen) ng = sprintf("%.2f", m / median("ceiling " f[2] " nginx"))
      cpu = x[k, "redis_cpu_us/decision"] ? sprintf("%.2f", x[k, "redis_cpu_us/decision"] / n[k]) : ""
      if (x[k, "store_cpu_us/decision"]) cpu = sprintf("%.2f", x[k, "store_cpu_us/decision"] / n[k])
      ev = x[k, "evalsha/decision"] ? sprintf("%.3f", x[k, "evalsha/decision"] / n[k]) : ""
      if (x[k, "commits/decision"]) ev = sprintf("%.3f", x[k, "commits/decision"] / n[k])
      printf "| %s | %s | %s | %.0f | %.2f | %.2f | %s | %s | %s | %s |\n", f[1], f[2], f[3], m, p50[k] / n[k],
        p99[k] / n[k], ratio, ng, cpu, ev
    }
  }' "$results"
