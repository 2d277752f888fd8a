#!/usr/bin/env bash
# Builds sluice-bench and runs the MongoDB store's decisions per second: tryAcquire from 1 and 64 callers, on one
# hot key and on 100,000 keys, for TOKEN_BUCKET and SLIDING_WINDOW_COUNTER. The server is mongo-java-server in the
# benchmark's JVM, or the one SLUICE_MONGODB_URL names. About 8 minutes on 2 cores (most of it filling 100,000 keys).
#
# Usage: sluice-bench/run-mongodb.sh [output-dir]        (default: sluice-bench/target/results)
# Writes jmh-mongodb.json (JMH's JSON) and the console log next to it, with the machine's load before and after.
# JMH_OPTS is appended to the JMH command line, e.g. JMH_OPTS="-p keys=1" for a quicker look.
set -euo pipefail

# shellcheck source=bench-common.sh
source "$(dirname "$0")/bench-common.sh"
bench_start results "${1:-}"

{
  date_and_cpu
  echo "server: ${SLUICE_MONGODB_URL:-mongo-java-server in the benchmark JVM}"
  echo "load average at start: $(load_average)"
  java -version 2>&1
} | tee "$out/machine-mongodb.txt"

# shellcheck disable=SC2086
java -Djmh.ignoreLock=true -jar "$jar" 'dev\.sluice\.bench\.mongodb\.' \
    -rf json -rff "$out/jmh-mongodb.json" ${JMH_OPTS:-} | tee "$out/jmh-mongodb.txt"

echo "load average at end: $(load_average)" | tee -a "$out/machine-mongodb.txt"
echo "results in $out"
