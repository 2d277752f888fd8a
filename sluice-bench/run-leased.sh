#!/usr/bin/env bash
# Builds sluice-bench and runs the leased-mode set: LeaseBench (tryAcquire of FIXED_WINDOW, SLIDING_WINDOW_COUNTER
# and SLIDING_TAIL, leased against in-memory, on 1 and 10,000 keys, 1 thread, with -prof gc: 12 runs of about 15 s,
# 8 of them warm-up), then LeaseCost (thread CPU time per decision on a virtual clock, which a busy machine disturbs
# far less). About 4 minutes on 2 cores.
#
# Usage: sluice-bench/run-leased.sh [output-dir]        (default: sluice-bench/target/results)
# Writes jmh-leased.json, jmh-leased.txt and lease-cost.md. JMH_OPTS is appended to the JMH command line.
set -euo pipefail

# shellcheck source=bench-common.sh
source "$(dirname "$0")/bench-common.sh"
bench_start results "${1:-}"

echo "load average at start: $(load_average)" | tee "$out/leased-machine.txt"
# shellcheck disable=SC2086  # the option variable is word-split on purpose
java -jar "$jar" 'dev\.sluice\.bench\.LeaseBench\.' -p keys=1,10000 -prof gc \
    -rf json -rff "$out/jmh-leased.json" ${JMH_OPTS:-} | tee "$out/jmh-leased.txt"
java -Xms2g -Xmx2g -XX:+AlwaysPreTouch -cp "$jar" dev.sluice.bench.LeaseCost | tee "$out/lease-cost.md"
echo "load average at end: $(load_average)" | tee -a "$out/leased-machine.txt"
echo "results in $out"
