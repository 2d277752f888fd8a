#!/usr/bin/env bash
# Builds sluice-bench and runs the policy set: PolicyBench (PolicyLimiter.check of an OAuth user-grant request on a
# per-client rule with a nested per-user rule, against the bare RateLimiter.tryAcquire of the same algorithm and
# the same decision through tryAcquireAll, in memory, FIXED_WINDOW and SLIDING_TAIL, 8 (client, user) pairs, one
# thread, with -prof gc: 8 runs of about 20 s; 1 fork, 3 x 2 s warm-up, 5 x 2 s measured), then PolicyMetricsHeap
# (the heap the detailed metrics keep after 1,000,000 distinct client ids). About 5 minutes on 2 cores.
#
# Usage: sluice-bench/run-policy.sh [output-dir]        (default: sluice-bench/target/results)
# Writes jmh-policy.json, jmh-policy.txt, policy-metrics-heap.md and policy-machine.txt. JMH_OPTS is appended to the
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
java -jar "$jar" 'dev\.sluice\.bench\.PolicyBench\.' -f 1 -wi 3 -w 2s -i 5 -r 2s -prof gc \
    -rf json -rff "$out/jmh-policy.json" ${JMH_OPTS:-} | tee "$out/jmh-policy.txt"
java -XX:+UseSerialGC -Xmx4g -cp "$jar" dev.sluice.bench.PolicyMetricsHeap 1000000 | tee "$out/policy-metrics-heap.md"
echo "load average at end: $(load_average)" | tee -a "$out/policy-machine.txt"
echo "results in $out"
