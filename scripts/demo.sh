#!/usr/bin/env bash
# Installs what is missing, builds memledger, and runs the main job: the teaching example.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/setup.sh" build
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release -DMEMLEDGER_BUILD_TESTS=OFF -DMEMLEDGER_BUILD_BENCH=OFF >/dev/null
cmake --build "$root/build" --target memledger_cli -j "$(nproc)" >/dev/null
exec "$root/build/memledger" demo "$@"
