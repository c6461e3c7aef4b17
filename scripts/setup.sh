#!/usr/bin/env bash
# Installs the Debian packages memledger needs, only those missing. Sourced or run by
# demo.sh and test.sh; safe to run again. Groups: build (always), corpus, browser.
set -euo pipefail

# ocl-icd-opencl-dev: Debian's oneDNN is built with an OpenCL GPU runtime, so its CMake config
# requires the OpenCL headers; the package only recommends them and we install without
# recommends.
build_packages=(cmake g++ make libgtest-dev libgmock-dev libbenchmark-dev libonnx-dev libprotobuf-dev
  protobuf-compiler libcli11-dev nlohmann-json3-dev libtomlplusplus-dev libfmt-dev libdnnl-dev
  ocl-icd-opencl-dev libflatbuffers-dev flatbuffers-compiler)
test_packages=(libonnx-testdata python3-pyarmnn libarmnn-cpuref-backend22 python3-flatbuffers clang libclang-rt-14-dev python3-onnx python3-numpy python3-torch
  python3-torchvision chromium)

want=("${build_packages[@]}")
for group in "$@"; do
  case "$group" in
    build) ;;
    test) want+=("${test_packages[@]}") ;;
    *) echo "setup.sh: unknown package group '$group' (build, test)" >&2; exit 2 ;;
  esac
done

# Node.js may come from outside Debian (NodeSource's nodejs bundles npm and conflicts with
# Debian's npm package), so node and npm count as present when the commands exist.
if [[ " $* " == *" test "* ]] && ! { command -v node && command -v npm; } >/dev/null 2>&1; then
  want+=(nodejs npm)
fi

missing=()
for package in "${want[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup.sh: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
