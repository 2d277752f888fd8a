#!/usr/bin/env bash
# Builds sluice-bench and runs the whole in-memory set: every Sluice algorithm, Bucket4j, Resilience4j and
# Guava on 1 and 1,000,000 keys, 1 and 2 threads (4 threads: run-peers.sh), ALLOWED and DENIED loads, the token
# buckets by time source and the floor costs, all with -prof gc (98 runs of 7-10 s: 1 fork, 2 x 1 s warm-up,
# 3 x 1 s measured); then the heap per idle key; then the Markdown tables of docs/benchmarks.md. 12-15 minutes on 2 cores.
#
# Usage: sluice-bench/run-inmemory.sh [output-dir]        (default: sluice-bench/target/results)
# Writes jmh-inmemory.json (JMH's JSON), heap-per-key.json, tables.md, and the console logs next to them.
# JMH_OPTS is appended to the JMH command line, e.g. JMH_OPTS="-p keys=1 -p load=ALLOWED" for a quicker look;
# BENCH_JAVA_OPTS goes to the JVM that runs JMH (JMH refuses to start while another JMH run holds its lock
# file; -Djmh.ignoreLock=true overrides that, at the price of two runs disturbing each other).
set -euo pipefail

# shellcheck source=bench-common.sh
source "$(dirname "$0")/bench-common.sh"
bench_start results "${1:-}"

{
  date_and_cpu
  echo "load average at start: $(load_average)"
  java -version 2>&1
} | tee "$out/machine.txt"

# shellcheck disable=SC2086  # the option variables are word-split on purpose
java ${BENCH_JAVA_OPTS:-} -jar "$jar" 'dev\.sluice\.bench\.(SluiceBench|Bucket4jBench|Resilience4jBench|GuavaBench|TimeSourceBench|Floor)\.' \
    -e '4T$' -f 1 -wi 2 -w 1s -i 3 -r 1s -prof gc \
    -rf json -rff "$out/jmh-inmemory.json" ${JMH_OPTS:-} | tee "$out/jmh-inmemory.txt"

java -XX:+UseSerialGC -Xmx4g -cp "$jar" dev.sluice.bench.HeapPerKey 1000000 "$out/heap-per-key.json" \
    | tee "$out/heap-per-key.txt"

java -cp "$jar" dev.sluice.bench.Report "$out/jmh-inmemory.json" > "$out/tables.md"
echo "load average at end: $(load_average)" | tee -a "$out/machine.txt"
echo "results in $out"
