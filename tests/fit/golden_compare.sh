#!/usr/bin/env bash
# Byte-identical outputs across a refactor (issue 34, item 6): records what one build of the
# CLI writes for `fit` (text, --json, --emit-c), `plan` (text, --json, --emit-c, in the model's
# and the memory-aware order) and `run --arena --fit` over corpus models and the built-in
# devices, then compares another build's outputs with them. Timings (planning seconds, the
# schedule's and the run's seconds) are the only thing masked: everything else must match.
#
#   tests/fit/golden_compare.sh record  CLI GOLDEN_DIR [CORPUS_DIR]
#   tests/fit/golden_compare.sh compare CLI GOLDEN_DIR [CORPUS_DIR]
# Environment: MODELS (default: the five below), DEVICES (default: mcu teaching), RUN_MODELS
# (models for `run --arena --fit`, default mobilenet_v2; empty: none). A compare over a subset
# checks the outputs it made against those recorded.
set -euo pipefail

mode=${1:?record or compare}
cli=$(realpath "${2:?the memledger program}")
golden=${3:?the golden directory}
corpus=${4:-${MEMLEDGER_CORPUS_DIR:-/work/main/build-test/corpus}}
models=${MODELS:-mobilenet_v2 mnasnet0_5 mobilenet_v3_small efficientnet_b0 resnet18}
devices=${DEVICES:-mcu teaching}
run_models=${RUN_MODELS-mobilenet_v2}

case $mode in
  record) out=$golden; rm -rf "$out"; mkdir -p "$out" ;;
  compare) out=$(mktemp -d); trap 'rm -rf "$out"' EXIT ;;
  *) echo "usage: $0 record|compare CLI GOLDEN_DIR [CORPUS_DIR]" >&2; exit 2 ;;
esac

# Masks the figures that measure time, not memory.
mask() {
  sed -E -e 's/"(planning_seconds|seconds|wall_seconds|run_seconds)": [-0-9.e+]+/"\1": T/g' \
         -e 's/ +[0-9]+\.[0-9]{2} s  (kept|not kept)/ T s  \1/' \
         -e 's/[0-9]+\.[0-9]+ ms/T ms/g' -e 's/, [0-9]+\.[0-9]{2} s, /, T s, /g' "$1" > "$1.masked" && mv "$1.masked" "$1"
}

# run NAME CMD...: the command's stdout+stderr and exit code into $out/NAME.txt
run() {
  local name=$1; shift
  local rc=0
  (cd "$out" && "$cli" "$@") > "$out/$name.txt" 2>&1 || rc=$?
  echo "exit $rc" >> "$out/$name.txt"
}

for m in $models; do
  model=$corpus/$m.onnx
  [[ -f $model ]] || { echo "missing $model" >&2; exit 2; }
  for d in $devices; do
    run "fit.$m.$d" fit "$model" --device "$d" --json "fit.$m.$d.json" --emit-c "fit.$m.$d.h"
    for s in model memory; do
      run "plan.$m.$d.$s" plan "$model" --device "$d" --schedule "$s" --brief \
        --json "plan.$m.$d.$s.json" --emit-c "plan.$m.$d.$s.h"
    done
  done
done
for m in $run_models; do
  run "run.$m.mcu" run "$corpus/$m.onnx" --arena --fit --device mcu
done
for f in "$out"/*; do mask "$f"; done

if [[ $mode == compare ]]; then
  # Every output of this run against the one recorded (MODELS/DEVICES may pick a subset).
  differ=0
  for f in "$out"/*; do
    name=$(basename "$f")
    if [[ ! -f $golden/$name ]]; then
      echo "golden: $name was not recorded" >&2; differ=1
    elif ! cmp -s "$golden/$name" "$f"; then
      echo "golden: $name differs:" >&2; diff "$golden/$name" "$f" | head -20 >&2; differ=1
    fi
  done
  ((differ == 0)) || { echo "golden: outputs differ" >&2; exit 1; }
  echo "golden: $(ls "$out" | wc -l) outputs identical"
else
  echo "golden: $(ls "$out" | wc -l) outputs recorded in $out"
fi
