#!/usr/bin/env bash
# Builds sluice-bench and runs the Redis set against one Redis server started here: Sluice's Redis store (token
# bucket), Bucket4j's Lettuce compare-and-swap backend and the trivial-EVALSHA ceiling, each with 1 and 64 callers,
# on one hot key and on 100,000 keys; then redis-benchmark's view of the same server (if redis-benchmark is
# installed: apt-get install redis-tools); then the Markdown tables of docs/benchmarks.md. About 10 minutes.
#
# Usage: sluice-bench/run-redis.sh [output-dir]        (default: sluice-bench/target/results-redis)
# Writes jmh-redis.csv (JMH's CSV), redis-benchmark.txt, tables.md and the console logs next to them.
# PAIRS=n adds n paired runs of the goal's cell, hot key and 64 callers: Sluice, then the trivial EVALSHA (the other
# way round every second pair), each 2 x 2 s warm-up and 3 x 2 s measured, so that both of a pair see about the same
# background load; writes pairs.txt with each pair's ratio and their median. SET=0 runs only the pairs.
# The server is redis-server from the PATH if there is one, else the Redis 6.2 binary inside the benchmarks jar
# (from embedded-redis). REDIS_PORT (default 16379) is its port. JMH_OPTS is appended to the JMH command line, e.g.
# JMH_OPTS="-p keys=1" for a quicker look.
set -euo pipefail

# shellcheck source=bench-common.sh
source "$(dirname "$0")/bench-common.sh"
bench_start results-redis "${1:-}"
port="${REDIS_PORT:-16379}"

server="$(command -v redis-server || true)"
if [ -z "$server" ]; then
  case "$(uname -m)" in
    x86_64) binary=redis-server-6.2.6-v5-linux-amd64 ;;
    aarch64) binary=redis-server-6.2.7-linux-arm64 ;;
    *) echo "no redis-server on the PATH and no embedded one for $(uname -m): apt-get install redis-server" >&2; exit 1 ;;
  esac
  server="$out/redis-server"
  unzip -p "$jar" "$binary" > "$server"
  chmod +x "$server"
fi
"$server" --port "$port" --bind 127.0.0.1 --save '' --appendonly no --dir "$out" > "$out/redis.log" 2>&1 &
server_pid=$!
trap 'kill "$server_pid" 2>/dev/null || true' EXIT
for _ in $(seq 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  sleep 0.1
done

{
  date_and_cpu
  echo "load average at start: $(load_average)"
  echo "redis: $("$server" --version)"
  java -version 2>&1
} | tee "$out/machine.txt"

if [ "${SET:-1}" != 0 ]; then
# shellcheck disable=SC2086
SLUICE_REDIS_URL="redis://127.0.0.1:$port" java -jar "$jar" 'dev\.sluice\.bench\.redis\.' \
    -rf csv -rff "$out/jmh-redis.csv" ${JMH_OPTS:-} | tee "$out/jmh-redis.txt"

if command -v redis-benchmark > /dev/null; then
  {
    trivial="$(redis-cli -p "$port" SCRIPT LOAD 'return 1')"
    # the token bucket's script as the store sends it for one decision (common.lua, the algorithm, single.lua)
    script="$(for part in common token_bucket single; do unzip -p "$jar" "dev/sluice/redis/$part.lua"; echo; done)"
    bucket="$(redis-cli -p "$port" SCRIPT LOAD "$script")"
    # each script's own cost on the server (usec_per_call of EVALSHA), then its throughput from 1 and 64 clients
    for what in trivial bucket; do
      if [ "$what" = trivial ]; then
        sha="$trivial"; args=('sluice:{hot}:x')
        echo "== trivial EVALSHA (return 1), one key"
      else
        sha="$bucket"; args=('sluice:{hot}:tb:100000000' a T 10000000 100000 1 0 0)
        echo "== Sluice's token bucket script (Redis TIME, 10,000,000 per 100 ms: always allowed), one key"
      fi
      for clients in 1 64; do
        redis-cli -p "$port" CONFIG RESETSTAT > /dev/null
        echo -n "$clients clients: "
        redis-benchmark -p "$port" -c "$clients" -n 300000 -q EVALSHA "$sha" 1 "${args[@]}" \
            | tr '\r' '\n' | grep 'requests per second' | sed 's/.*: //'
        redis-cli -p "$port" INFO commandstats | grep '^cmdstat_evalsha:' | sed 's/^/    /'
      done
    done
    redis-cli -p "$port" DEL 'sluice:{hot}:tb:100000000' > /dev/null
  } 2>&1 | tee "$out/redis-benchmark.txt"
fi
java -cp "$jar" dev.sluice.bench.redis.RedisReport "$out/jmh-redis.csv" > "$out/tables.md"
fi

if [ "${PAIRS:-0}" -gt 0 ]; then
  score() {  # the throughput in a JMH CSV
    awk -F, 'NR == 2 { print $5 }' "$1"
  }
  one() {  # runs one benchmark method on the hot key into $2.csv, waiting while another JMH run holds its lock
    while ! SLUICE_REDIS_URL="redis://127.0.0.1:$port" java -jar "$jar" "$1" -p keys=1 -wi 2 -w 2s -i 3 -r 2s \
        -rf csv -rff "$2.csv" > "$2.txt" 2>&1; do
      grep -q 'Another JMH instance' "$2.txt" || { cat "$2.txt" >&2; exit 1; }
      sleep 15
    done
  }
  : > "$out/pairs.txt"
  ratios=()
  for i in $(seq "$PAIRS"); do
    if [ $((i % 2)) -eq 1 ]; then
      one 'SluiceRedisBench.tryAcquire64T' "$out/pair-$i-sluice"
      one 'EvalshaCeilingBench.evalsha64T' "$out/pair-$i-trivial"
    else
      one 'EvalshaCeilingBench.evalsha64T' "$out/pair-$i-trivial"
      one 'SluiceRedisBench.tryAcquire64T' "$out/pair-$i-sluice"
    fi
    s="$(score "$out/pair-$i-sluice.csv")"
    t="$(score "$out/pair-$i-trivial.csv")"
    r="$(awk -v s="$s" -v t="$t" 'BEGIN { printf "%.0f", 100 * s / t }')"
    ratios+=("$r")
    printf 'pair %d: Sluice %.0f ops/s, trivial EVALSHA %.0f ops/s: %s %%\n' "$i" "$s" "$t" "$r" | tee -a "$out/pairs.txt"
  done
  printf '%s\n' "${ratios[@]}" | sort -n | awk '{ a[NR] = $1 } END { print "median: " a[int((NR + 1) / 2)] " %" }' \
      | tee -a "$out/pairs.txt"
fi

echo "load average at end: $(load_average)" | tee -a "$out/machine.txt"
echo "results in $out"
