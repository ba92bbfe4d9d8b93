#!/usr/bin/env bash
# bench/gpu/opencl_diag.sh — why OpenCL on the H200 loses the NVIDIA device
# (issue 14): `ksearch roofline --backend opencl --list` (in ksearch) shows
# "1: NVIDIA H200", but every child ksearch-runner saw only PoCL
# (2026-12-03/04). Registers NVIDIA's ICD in a vendors folder of its own
# (OCL_ICD_VENDORS, as ../shared/device/README.md says), then asks for the
# device in: ksearch itself; ksearch-runner's roofline child; the same
# runner linked without -rdynamic and without the malloc interposer (built by
# the caller into DIAG_DIR, default .devcarry/diag: runner-nodyn,
# runner-noguard); and the runner under LD_DEBUG=libs (which libraries it
# loads for the ICD). Prints one line per probe.
#   bench/gpu/opencl_diag.sh
set -u
ks=${KSEARCH:-./build/ksearch}
diag=${DIAG_DIR:-.devcarry/diag}
icd=$(mktemp -d /tmp/ks-icd.XXXXXX)
echo /usr/local/nvidia/lib64/libnvidia-opencl.so.1 >"$icd/nvidia.icd"
export OCL_ICD_VENDORS=$icd
line() { echo "[$1] $(tr '\n' ' ' | cut -c1-${2:-500})"; }
"$ks" roofline --backend opencl --list 2>&1 | line "ksearch --list"
nv=$("$ks" roofline --backend opencl --list 2>&1 | sed -n 's/^[ *]*\([0-9]*\): NVIDIA.*/\1/p' | head -1)
export KSEARCH_OPENCL_DEVICE=${nv:-1}
KSEARCH_OPENCL_DEVICE=${nv:-1} "$ks" roofline --backend opencl --list 2>&1 | line "ksearch --list with the device chosen"
for r in ./build/ksearch-runner "$diag/runner-nodyn" "$diag/runner-noguard"; do
  [[ -x $r ]] || { echo "[$r] missing"; continue; }
  POCL_MAX_PTHREAD_COUNT=16 timeout 60 "$r" --opencl-roofline 16 2>&1 | line "$r --opencl-roofline"
done
LD_DEBUG=libs timeout 60 ./build/ksearch-runner --opencl-roofline 16 2>&1 | grep -iE "nvidia|libcuda|cannot|error" | head -12 | line "runner LD_DEBUG=libs (nvidia lines)" 1500
LD_DEBUG=libs timeout 60 "$ks" roofline --backend opencl --list 2>&1 | grep -iE "nvidia|libcuda|cannot|error" | head -12 | line "ksearch LD_DEBUG=libs (nvidia lines)" 1500
rm -rf "$icd"
