#!/usr/bin/env bash
# Builds sluice-bench and runs the synchronized-mode set: SyncBench (tryAcquire of FIXED_WINDOW,
# SLIDING_WINDOW_COUNTER and SLIDING_TAIL, synchronized against in-memory, on 1 and 10,000 keys, 1 thread,
# with -prof gc: 12 runs of about 10 s), then SyncRoundTrips (counter-store calls per flush against dirty keys,
# batch size and requests per key). About 3 minutes on 2 cores.
#
# Usage: sluice-bench/run-sync.sh [output-dir]        (default: sluice-bench/target/results)
# Writes jmh-sync.json, jmh-sync.txt and sync-round-trips.md. JMH_OPTS is appended to the JMH command line.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
out="${1:-$root/sluice-bench/target/results}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"
cd "$root"

mvn -B -q -pl sluice-bench -am package -DskipTests
jar=sluice-bench/target/benchmarks.jar

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/sync-machine.txt"
# shellcheck disable=SC2086  # the option variable is word-split on purpose
java -jar "$jar" 'dev\.sluice\.bench\.SyncBench\.' -p keys=1,10000 -prof gc \
    -rf json -rff "$out/jmh-sync.json" ${JMH_OPTS:-} | tee "$out/jmh-sync.txt"
java -cp "$jar" dev.sluice.bench.SyncRoundTrips | tee "$out/sync-round-trips.md"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/sync-machine.txt"
echo "results in $out"
