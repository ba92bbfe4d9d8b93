#!/usr/bin/env bash
# The issue-16 CUDA templates and baselines on the CPU emulation of CUDA
# (tests/cuda_emu/run.sh; DESIGN.md: Tests and CI): CI has no GPU, so this is
# where their fragment layouts, masks, gathers, tie-breaks and cp.async waits
# are checked against double-precision references.
here=$(cd "$(dirname "$0")/../.." && pwd)
exec bash "$here/tests/cuda_emu/run.sh"
