#!/usr/bin/env bash
# Builds sluice-bench and runs the synchronized-mode set: SyncBench (tryAcquire of FIXED_WINDOW,
# SLIDING_WINDOW_COUNTER and SLIDING_TAIL, synchronized against in-memory, on 1 and 10,000 keys, 1 thread,
# with -prof gc: 12 runs of about 15 s, 8 of them warm-up), then SyncCost (thread CPU time per decision and per
# flush over 10,000 keys), then SyncRoundTrips (counter-store calls per flush against dirty keys, batch size and
# requests per key). About 5 minutes on 2 cores.
#
# Usage: sluice-bench/run-sync.sh [output-dir]        (default: sluice-bench/target/results)
# Writes jmh-sync.json, jmh-sync.txt, sync-cost.md and sync-round-trips.md. JMH_OPTS is appended to the JMH command line.
set -euo pipefail

# shellcheck source=bench-common.sh
source "$(dirname "$0")/bench-common.sh"
bench_start results "${1:-}"

echo "load average at start: $(load_average)" | tee "$out/sync-machine.txt"
# shellcheck disable=SC2086  # the option variable is word-split on purpose
java -jar "$jar" 'dev\.sluice\.bench\.SyncBench\.' -p keys=1,10000 -prof gc \
    -rf json -rff "$out/jmh-sync.json" ${JMH_OPTS:-} | tee "$out/jmh-sync.txt"
java -cp "$jar" dev.sluice.bench.SyncCost | tee "$out/sync-cost.md"
java -cp "$jar" dev.sluice.bench.SyncRoundTrips | tee "$out/sync-round-trips.md"
echo "load average at end: $(load_average)" | tee -a "$out/sync-machine.txt"
echo "results in $out"
