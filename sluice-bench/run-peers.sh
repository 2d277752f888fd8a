#!/usr/bin/env bash
# Builds sluice-bench and runs the side-by-side table of docs/benchmarks.md ("Against every peer"): Sluice's token
# bucket, sliding tail and fixed window against Bucket4j, Resilience4j and Guava, each behind the per-key
# ConcurrentHashMap lookup a service needs; 1 and 1,000,000 keys; ALLOWED and DENIED loads; 1, 2 and 4 threads; all
# with -prof gc (72 runs of about 8 s: 1 fork, 2 x 1 s warm-up, 3 x 1 s measured). About 10 minutes on 2 cores.
#
# Usage: sluice-bench/run-peers.sh [output-dir]        (default: sluice-bench/target/peers)
# Writes jmh-peers.json (JMH's JSON), jmh-peers.txt, peers.md (the tables) and machine.txt. JMH_OPTS is appended to
# the JMH command line, e.g. JMH_OPTS="-p keys=1" for a quicker look. FORKS, WARMUPS and ITERATIONS (default 1, 2
# and 3) set JMH's -f, -wi and -i for steadier figures: FORKS=2 WARMUPS=3 ITERATIONS=5 takes about 25 minutes.
set -euo pipefail

# shellcheck source=bench-common.sh
source "$(dirname "$0")/bench-common.sh"
bench_start peers "${1:-}"

{
  date_and_cpu
  echo "load average at start: $(load_average)"
  java -version 2>&1
} | tee "$out/machine.txt"

# shellcheck disable=SC2086  # the option variable is word-split on purpose
java -jar "$jar" \
    'dev\.sluice\.bench\.(SluiceBench\.tryAcquire|Bucket4jBench\.tryConsume|Resilience4jBench\.acquirePermission|GuavaBench\.tryAcquire)[124]T$' \
    -p algorithm=TOKEN_BUCKET,SLIDING_TAIL,FIXED_WINDOW \
    -f "${FORKS:-1}" -wi "${WARMUPS:-2}" -w 1s -i "${ITERATIONS:-3}" -r 1s -prof gc \
    -rf json -rff "$out/jmh-peers.json" ${JMH_OPTS:-} | tee "$out/jmh-peers.txt"

java -cp "$jar" dev.sluice.bench.Report --peers "$out/jmh-peers.json" | tee "$out/peers.md"
echo "load average at end: $(load_average)" | tee -a "$out/machine.txt"
echo "results in $out"
