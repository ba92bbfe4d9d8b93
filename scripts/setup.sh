#!/usr/bin/env bash
# Installs everything ksearch needs on Debian 12 (run as root, or with sudo
# available). Idempotent: packages already present are not fetched again.
set -euo pipefail
pkgs=(build-essential pkg-config python3 python3-pip libjansson-dev libsqlite3-dev libseccomp-dev
      libcurl4-openssl-dev libcriterion-dev clang-format
      ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
      chromium python3-pil  # headless browser + screenshot pixels: tests/integration/report.sh
      libhiredis-dev redis-server
      libssl-dev openssl  # rediss://: OpenSSL carries the TLS (src/dist/tls.c); openssl makes test certificates
      clang-14 libclang-rt-14-dev)  # clang-14 + its runtime: libFuzzer, `make fuzz`
missing=()
for p in "${pkgs[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if ((${#missing[@]})); then
  sudo=""
  [[ $(id -u) -eq 0 ]] || sudo="sudo"
  echo "setup: installing ${missing[*]}" >&2
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
fi
# MLX for the mlx backend (issue 15): mlx[cpu] and mlx-lm (the baselines'
# MambaBlock) into the Python ksearch starts (KSEARCH_PYTHON, else python3).
# CI tests the executor, the baselines' math and export on the CPU; on an
# NVIDIA machine install mlx[cuda] instead, on a Mac plain mlx.
py=${KSEARCH_PYTHON:-python3}
if ! "$py" -c 'import mlx.core, mlx_lm' >/dev/null 2>&1; then
  echo "setup: pip install mlx[cpu] mlx-lm for $py" >&2
  "$py" -m pip install -q 'mlx[cpu]' mlx-lm ||
    "$py" -m pip install -q --break-system-packages 'mlx[cpu]' mlx-lm  # Debian 12's python3 is externally managed
fi
