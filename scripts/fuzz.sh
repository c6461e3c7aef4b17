#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan) in build-fuzz/ and runs each for a
# bounded time on a seed corpus of the committed test files.
#   scripts/fuzz.sh [SECONDS [TARGET...]]   SECONDS per target, default 45; targets: import
#                                           tflite profile placement_csv tensor_file diff (all)
# FUZZ_CLOCK=cpu counts SECONDS as CPU time of the fuzzer (user + sys) instead of wall time,
# so a long run on a shared machine gets the work it claims: the fuzzer is interrupted once
# its CPU time reaches SECONDS (libFuzzer prints its final statistics and exits 72).
# Findings (crash-*, leak-*, timeout-*, oom-*) land in build-fuzz/findings/<target>/; the
# script fails if any target finds one. Corpora grow across runs in build-fuzz/corpus/.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-fuzz"
seconds=${1:-45}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(import tflite profile placement_csv tensor_file diff)
# -O1 -g1: a build from scratch in about half the time of -O2 -g; the fuzzers check parsers, not
# the bits of any computation.
cmake -S "$root/fuzz" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" >/dev/null
cmake --build "$build" -j 2 --target $(printf 'memledger_%s_fuzzer ' "${targets[@]}")

seed() {  # seed TARGET: copies the committed files of its format into its corpus
  local corpus="$build/corpus/$1"
  mkdir -p "$corpus"
  case "$1" in
    import) cp -n "$root"/tests/data/onnx/*.onnx "$corpus"/ 2>/dev/null || true ;;
    tflite) cp -n "$root"/tests/data/tflite/*.tflite "$corpus"/ 2>/dev/null || true ;;
    profile) cp -n "$root"/tests/data/device/*.toml "$corpus"/ 2>/dev/null || true ;;
    placement_csv) cp -n "$root"/tests/data/allocate/*.csv "$corpus"/ 2>/dev/null || true ;;
    tensor_file)  # the first byte selects the format: odd .npy, even .pb
      for f in "$root"/tests/data/exec/*.npy; do { printf '\001'; cat "$f"; } >"$corpus/seed_$(basename "$f")"; done
      for f in "$root"/tests/data/exec/*.pb; do { printf '\000'; cat "$f"; } >"$corpus/seed_$(basename "$f")"; done ;;
    diff)  # BEFORE NUL AFTER
      for f in "$root"/tests/data/report/*.json; do
        { cat "$f"; printf '\000'; cat "$root/tests/data/report/small_plan.json"; } \
          >"$corpus/seed_$(basename "$f")"
      done ;;
  esac
}

stop_at_cpu() {  # stop_at_cpu PID SECONDS: SIGINT to PID once its user + sys time reaches SECONDS
  local ticks limit
  limit=$(($2 * $(getconf CLK_TCK)))
  while [ -e "/proc/$1/stat" ]; do
    ticks=$(awk '{ print $14 + $15 }' "/proc/$1/stat" 2>/dev/null) || return 0
    if [ "${ticks:-0}" -ge "$limit" ]; then kill -INT "$1" 2>/dev/null; return 0; fi
    sleep 5
  done
}

wall=$seconds
[ "${FUZZ_CLOCK:-wall}" = cpu ] && wall=$((seconds * 50))  # wall time only as a backstop

export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
for t in "${targets[@]}"; do
  seed "$t"
  mkdir -p "$build/findings/$t"
  echo "== fuzzing $t for ${seconds} s (${FUZZ_CLOCK:-wall} time)"
  "$build/memledger_${t}_fuzzer" "$build/corpus/$t" -max_total_time="$wall" -timeout=10 -rss_limit_mb=2048 \
    -max_len="$([ "$t" = diff ] && echo 16384 || echo 4096)" -artifact_prefix="$build/findings/$t/" -print_final_stats=1 2>"$build/findings/$t.log" &
  pid=$!
  if [ "${FUZZ_CLOCK:-wall}" = cpu ]; then stop_at_cpu "$pid" "$seconds" & fi
  code=0
  wait "$pid" || code=$?
  # 72: interrupted by stop_at_cpu once its CPU time was spent (not a finding)
  if [ "$code" -ne 0 ] && { [ "${FUZZ_CLOCK:-wall}" != cpu ] || [ "$code" -ne 72 ]; }; then
    status=1
    tail -40 "$build/findings/$t.log"
  fi
  grep -E "stat::number_of_executed_units|Done [0-9]+ runs" "$build/findings/$t.log" | tail -2 || true
done
exit $status
