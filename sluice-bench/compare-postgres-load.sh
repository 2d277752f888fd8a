#!/usr/bin/env bash
# Compares two builds of Sluice's PostgreSQL exact mode side by side, in one run on one PostgreSQL server: for 16 and
# 64 callers, on one hot key and on 10,000 keys, each build in turn (PostgresLoad: TOKEN_BUCKET admissions, a 3 s
# warm-up, then SECONDS measured), ROUNDS times. Prints decisions per second and the PostgreSQL server's CPU per
# decision (its processes' time in /proc), with the load average after each run. About 5 minutes for 2 rounds.
#
# Usage: sluice-bench/compare-postgres-load.sh BEFORE_JAR AFTER_JAR [ROUNDS] [SECONDS]     (2 rounds of 8 s)
# Each jar is sluice-bench/target/benchmarks.jar of one build
# (mvn -B -q -pl sluice-bench -am package -Dmaven.test.skip=true); each build writes a table of its own.
set -euo pipefail
before=$1
after=$2
rounds=${3:-2}
seconds=${4:-8}

coproc SERVER { java -cp "$after" dev.sluice.bench.postgres.PostgresServerMain 2>/dev/null; }
read -r -u "${SERVER[0]}" url
trap 'exec {SERVER[1]}>&-; wait "$SERVER_PID" || true' EXIT
echo "server: $url"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  for threads in 16 64; do
    for keys in 1 10000; do
      for build in before after; do
        jar=$before
        [[ $build == after ]] && jar=$after
        printf 'round=%s build=%s ' "$round" "$build"
        java -cp "$jar" dev.sluice.bench.postgres.PostgresLoad "$url" "load_$build" "$threads" "$keys" "$seconds" \
            2>/dev/null | tr -d '\n'
        echo " load=$(cut -d' ' -f1 /proc/loadavg)"
      done
    done
  done
done
