#!/usr/bin/env bash
# Builds sluice-bench and runs the policy set: PolicyBench (PolicyLimiter.check of one limit, two limits, a nested
# descriptor, a dry-run limit, a nested request built per call and one limit with metrics, against the bare
# RateLimiter.tryAcquire of the same algorithm and tryAcquireAll of one and of two parts; in memory, FIXED_WINDOW and
# SLIDING_TAIL, 8 keys, with -prof gc; 1 fork, 3 x 2 s warm-up, 5 x 2 s measured), once on one thread and once on two,
# then PolicyMetricsHeap (the heap the detailed metrics keep after 1,000,000 distinct client ids). About 15 minutes
# on 2 cores.
#
# Usage: sluice-bench/run-policy.sh [output-dir]        (default: sluice-bench/target/results)
# Writes jmh-policy-t1.json, jmh-policy-t2.json (and .txt), policy-metrics-heap.md and policy-machine.txt. JMH_OPTS is appended to the
# JMH command line.
set -euo pipefail

# shellcheck source=bench-common.sh
source "$(dirname "$0")/bench-common.sh"
bench_start results "${1:-}"

{
  date_and_cpu
  echo "load average at start: $(load_average)"
  java -version 2>&1
} | tee "$out/policy-machine.txt"

# shellcheck disable=SC2086  # the option variable is word-split on purpose
for threads in 1 2; do
  java -jar "$jar" 'dev\.sluice\.bench\.PolicyBench\.' -f 1 -wi 3 -w 2s -i 5 -r 2s -t "$threads" -prof gc \
      -rf json -rff "$out/jmh-policy-t$threads.json" ${JMH_OPTS:-} | tee "$out/jmh-policy-t$threads.txt"
done
java -XX:+UseSerialGC -Xmx4g -cp "$jar" dev.sluice.bench.PolicyMetricsHeap 1000000 | tee "$out/policy-metrics-heap.md"
echo "load average at end: $(load_average)" | tee -a "$out/policy-machine.txt"
echo "results in $out"
