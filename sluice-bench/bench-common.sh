# shellcheck shell=bash
# What every sluice-bench/run-*.sh does first, sourced by them (not run on its own).
#
# bench_start DEFAULT_DIR [OUTPUT_DIR]: sets root (the project), out (OUTPUT_DIR, else sluice-bench/target/DEFAULT_DIR;
# created; made absolute) and jar (the benchmarks jar, built here without tests), and makes root the working
# directory.
# date_and_cpu: the first two lines of every run's machine record (UTC date, CPU model and count).
# load_average: the machine's 1, 5 and 15 minute load averages.

bench_start() {
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  out="${2:-$root/sluice-bench/target/$1}"
  mkdir -p "$out"
  out="$(cd "$out" && pwd)"
  cd "$root"
  mvn -B -q -pl sluice-bench -am package -DskipTests
  jar=sluice-bench/target/benchmarks.jar
}

date_and_cpu() {
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') x $(nproc)"
}

load_average() {
  cut -d' ' -f1-3 /proc/loadavg
}
