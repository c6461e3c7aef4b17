#!/usr/bin/env bash
# Builds the ONNX importer's libFuzzer target with clang (ASan + UBSan) in build-fuzz/ and
# runs it for a bounded time on a seed corpus of the tiny test models.
#   scripts/fuzz.sh [SECONDS]     default 60
# Findings (crash-*, leak-*, timeout-*) land in build-fuzz/findings/; the script fails if any.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build="$root/build-fuzz"
seconds=${1:-60}
cmake -S "$root/fuzz" -B "$build" -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j 2 --target memledger_import_fuzzer
corpus="$build/corpus"   # grows across runs; seeded from the committed test models
mkdir -p "$corpus" "$build/findings"
cp -n "$root"/tests/data/onnx/*.onnx "$corpus"/ 2>/dev/null || true
export ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
"$build/memledger_import_fuzzer" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=4096 -artifact_prefix="$build/findings/" -print_final_stats=1
