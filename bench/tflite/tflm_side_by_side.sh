#!/usr/bin/env bash
# memledger's arena for TFLite Micro's own models next to TFLM's published figures (issue 36):
# the lower bound, greedy and exact placement of the non-persistent head under TFLM's rules
# (tests/data/tflite/tflm.toml: 16-byte alignment, the model's dtypes, weights in flash, the
# input in the arena), the persistent tail (variables) apart, and fit under the MCU profile.
#   bench/tflite/tflm_side_by_side.sh BUILD_DIR MODEL_DIR
set -euo pipefail
build=${1:?build dir}
models=${2:?folder with the .tflite models}
root=$(cd "$(dirname "$0")/../.." && pwd)
ml="$build/memledger"
profile="$root/tests/data/tflite/tflm.toml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
field() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['plan'][sys.argv[2]])" "$@"; }
echo "| model | nodes | lower bound (head) | greedy head | exact head | persistent (variables) | fit under mcu |"
echo "|---|---|---|---|---|---|---|"
for m in "$models"/*.tflite; do
  name=$(basename "$m" .tflite)
  "$ml" plan "$m" --device "$profile" --algorithm greedy --brief --json "$tmp/g.json" >/dev/null
  "$ml" plan "$m" --device "$profile" --algorithm exact --time-budget 5 --brief --json "$tmp/e.json" >"$tmp/e.txt"
  persistent=$(field "$tmp/e.json" persistent_bytes)
  lower=$(($(field "$tmp/e.json" lower_bound_bytes) - persistent))
  nodes=$(sed -n 's/^model: .* (\([0-9]*\) nodes.*/\1/p' "$tmp/e.txt")
  fit=$("$ml" fit "$m" --device mcu --json "$tmp/f.json" >/dev/null 2>&1 && field "$tmp/f.json" arena_bytes 2>/dev/null ||
        echo "see fit")
  echo "| $name | $nodes | $lower B | $(field "$tmp/g.json" head_bytes) B | $(field "$tmp/e.json" head_bytes) B | $persistent B | $fit |"
done
