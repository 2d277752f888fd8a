#!/usr/bin/env bash
# Builds sluice-bench and runs the PostgreSQL set on one PostgreSQL server: Sluice's PostgresStore (every algorithm)
# and Bucket4j's PostgreSQL backend (SELECT ... FOR UPDATE and advisory-lock variants), on 1 and 100,000 keys, from
# 1 and 64 callers. About 15 minutes on 2 cores.
#
# Usage: sluice-bench/run-postgres.sh [output-dir]        (default: sluice-bench/target/results)
# Writes jmh-postgres.json (JMH's JSON), jmh-postgres.txt (the console) and machine.txt next to them.
# The server is an embedded PostgreSQL started once for the run, unless SLUICE_POSTGRES_URL names one already.
# JMH_OPTS is appended to the JMH command line, e.g. JMH_OPTS="-p keys=1 -p algorithm=TOKEN_BUCKET".
set -euo pipefail

# shellcheck source=bench-common.sh
source "$(dirname "$0")/bench-common.sh"
bench_start results "${1:-}"

if [[ -z "${SLUICE_POSTGRES_URL:-}" ]]; then
  coproc SERVER { java -cp "$jar" dev.sluice.bench.postgres.PostgresServerMain 2>"$out/postgres-server.log"; }
  read -r -u "${SERVER[0]}" SLUICE_POSTGRES_URL
  export SLUICE_POSTGRES_URL
  trap 'exec {SERVER[1]}>&-; wait "$SERVER_PID" || true' EXIT
fi
echo "server: $SLUICE_POSTGRES_URL"

{
  date_and_cpu
  echo "load average at start: $(load_average)"
  java -version 2>&1
  psql "${SLUICE_POSTGRES_URL#jdbc:}" -Atc "SELECT version(); SHOW synchronous_commit; SHOW fsync; SHOW shared_buffers" \
      2>/dev/null || echo "(psql not found: server settings not recorded)"
} | tee "$out/machine.txt"

# One JMH run at a time on this machine (JMH's own lock): wait for any other run to end, up to an hour.
if command -v fuser >/dev/null; then
  for _ in $(seq 720); do
    fuser -s /tmp/jmh.lock 2>/dev/null || break
    sleep 5
  done
fi

# shellcheck disable=SC2086
java -jar "$jar" 'dev\.sluice\.bench\.postgres\.' -rf json -rff "$out/jmh-postgres.json" ${JMH_OPTS:-} \
    | tee "$out/jmh-postgres.txt"

echo "load average at end: $(load_average)" | tee -a "$out/machine.txt"
echo "results in $out"
