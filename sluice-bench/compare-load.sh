#!/usr/bin/env bash
# Compares two builds of Sluice's exact mode on one store side by side, in one run on one server: for 16 and 64
# callers, on one hot key and on 10,000 keys, each build in turn (the store's load class: TOKEN_BUCKET admissions, a
# 3 s warm-up, then SECONDS measured), ROUNDS times. Prints decisions per second and the server's CPU per decision
# (its processes' time in /proc), with the load average after each run. About 5 minutes for 2 rounds.
#
# Usage: sluice-bench/compare-load.sh STORE BEFORE_JAR AFTER_JAR [ROUNDS] [SECONDS]     (2 rounds of 8 s)
# STORE is postgres (embedded PostgreSQL, PostgresLoad), mongodb (mongo-java-server in a JVM of its own, MongoLoad)
# or redis (redis-server from the PATH on port REDIS_PORT, default 16391; RedisLoad: SLIDING_TAIL, one key being the
# service's hot key, nearly every decision refused, 10,000 keys all admitted; it also prints EVALSHA calls and time
# per decision from INFO commandstats). Each jar is sluice-bench/target/benchmarks.jar of one build
# (mvn -B -q -pl sluice-bench -am package -Dmaven.test.skip=true) and must hold the store's load class; the server
# runs from AFTER_JAR; each build writes a table or collection of its own.
set -euo pipefail
store=$1
before=$2
after=$3
rounds=${4:-2}
seconds=${5:-8}

case $store in
  postgres) server=dev.sluice.bench.postgres.PostgresServerMain load=dev.sluice.bench.postgres.PostgresLoad ;;
  mongodb) server=dev.sluice.bench.mongodb.MongoServerMain load=dev.sluice.bench.mongodb.MongoLoad ;;
  redis) load=dev.sluice.bench.redis.RedisLoad ;;
  *) echo "STORE must be postgres, mongodb or redis, was '$store'" >&2; exit 2 ;;
esac

if [[ $store == redis ]]; then
  port=${REDIS_PORT:-16391}
  redis-server --port "$port" --bind 127.0.0.1 --save '' --appendonly no >/dev/null &
  server_pid=$!
  trap 'kill "$server_pid"; wait "$server_pid" || true' EXIT
  url=redis://127.0.0.1:$port
  until redis-cli -p "$port" ping >/dev/null 2>&1; do sleep 0.1; done
else
  coproc java -cp "$after" "$server" 2>/dev/null
  server_pid=$COPROC_PID
  read -r -u "${COPROC[0]}" url
  trap 'exec {COPROC[1]}>&-; wait "$server_pid" || true' EXIT
fi
echo "store: $store server: $url"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  for threads in 16 64; do
    for keys in 1 10000; do
      for build in before after; do
        jar=$before
        [[ $build == after ]] && jar=$after
        printf 'round=%s build=%s ' "$round" "$build"
        # the server's process id: MongoLoad reads its CPU; PostgresLoad finds the postmaster itself
        java -cp "$jar" "$load" "$url" "load_$build" "$threads" "$keys" "$seconds" "$server_pid" \
            2>/dev/null | tr -d '\n'
        echo " load=$(cut -d' ' -f1 /proc/loadavg)"
      done
    done
  done
done
