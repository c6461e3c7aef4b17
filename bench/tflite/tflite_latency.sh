#!/usr/bin/env bash
# TFLite Micro's models run by memledger side by side with Arm NN (issue 36): one thread, the
# fast kernels (CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED as exact f32 convolutions,
# exec/fast/kernels_tflite_conv.cpp), the reference TFLite kernels, the fast kernels inside the
# planned arena, and Arm NN 20.08's CpuRef backend (scripts/tflite/armnn_reference.py --repeat),
# the one outside runtime Debian has for .tflite: a reference backend, not an optimised one, so
# its column says what the outside reference costs, not what a tuned runtime reaches. The
# configurations alternate over ROUNDS rounds; each prints the median of RUNS timed runs after
# a warm-up, and the table gives the median over rounds.
#   bench/tflite/tflite_latency.sh BUILD_DIR MODEL_DIR [ROUNDS [RUNS]]
set -euo pipefail
build=${1:?build dir}
models=${2:?folder with the .tflite models}
rounds=${3:-5}
runs=${4:-20}
root=$(cd "$(dirname "$0")/../.." && pwd)
ml="$build/memledger"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ms() { sed -n 's/.*latency[^:]*: [0-9]* runs after a warm-up: median \([0-9.]*\) ms.*/\1/p'; }
echo "| model | fast ms | reference ms | fast in arena ms | Arm NN CpuRef ms | reference / fast | CpuRef / fast |"
echo "|---|---:|---:|---:|---:|---:|---:|"
for m in "$models"/*.tflite; do
  name=$(basename "$m" .tflite)
  : >"$tmp/fast" && : >"$tmp/ref" && : >"$tmp/arena" && : >"$tmp/armnn"
  for _ in $(seq "$rounds"); do
    "$ml" run "$m" --kernels fast --repeat "$runs" | ms >>"$tmp/fast"
    "$ml" run "$m" --kernels reference --repeat "$runs" | ms >>"$tmp/ref"
    "$ml" run "$m" --kernels fast --arena --device host --repeat "$runs" | grep "arena latency" | ms >>"$tmp/arena"
    # person_detect's depthwise biases need --bias-axis-zero (the script's header says why).
    /usr/bin/python3 "$root/scripts/tflite/armnn_reference.py" "$m" "$tmp/armnn_out" --bias-axis-zero \
      --repeat "$runs" 2>/dev/null | sed -n 's/^armnn latency: median \([0-9.]*\) ms.*/\1/p' >>"$tmp/armnn" || true
  done
  fast=$(median <"$tmp/fast") ref=$(median <"$tmp/ref") arena=$(median <"$tmp/arena")
  armnn=$([ -s "$tmp/armnn" ] && median <"$tmp/armnn" || echo "refused")
  ratio=$(awk -v a="$ref" -v b="$fast" 'BEGIN { printf "%.1f", a / b }')
  outside=$([ "$armnn" = refused ] && echo "—" || awk -v a="$armnn" -v b="$fast" 'BEGIN { printf "%.1f", a / b }')
  echo "| $name | $fast | $ref | $arena | $armnn | $ratio | $outside |"
done
