#!/usr/bin/env bash
# tests/cuda_emu/run.sh — the issue-16 CUDA templates and baselines run on a
# CPU emulation of CUDA (emu.h): each case turns a kernel file into C++
# (xform.py), builds it with its harness (g++ -std=c++20) and compares the
# outputs with a double-precision reference at odd sizes (partial tiles,
# unaligned n, GQA groups of 1 to 8 and 3, a head_dim without an instance,
# one-token sequences, E = 256, repeated fused launches; the selective_scan
# warp_scan template: odd seqlen, windows carried over, partial blocks,
# delta_softplus 0; the wgmma GEMM with TMA=1: bulk tensor copies into the
# 128B-swizzled slots, zero-filled past m, n and k, expect_tx byte counts,
# and the cp.async/element fallback where rows are no 16-byte multiple;
# attention's wgmma_flash with PERSIST: a few resident blocks taking many
# work items each, so slots, parities, the Q region's barriers and the
# pingpong turns carry over from item to item).
# flash_decode's cases launch what its launch lines say (cuda_launch.py:
# grid, block, when= and scratch= evaluated for the case's axes and params).
# A case whose args end in "!trap" passes when the kernel traps (attention's
# wgmma_flash at a head_dim without an instance).
# Catches wrong fragment layouts, masks, gathers, tie-breaks and pipeline
# waits without a GPU; the GPU run (bench/gpu/kernels16.sh) covers the rest.
# Needs g++ with C++20 (<barrier>); skipped with the reason otherwise.
# EMU_ONLY=TEXT runs only the cases whose line holds TEXT.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=$(mktemp -d /tmp/ks-cuda-emu.XXXXXX)
trap 'rm -rf "$work"' EXIT
cxx=${CXX_EMU:-g++}
if ! echo '#include <barrier>
int main(){std::barrier<> b(1); b.arrive_and_wait();}' | "$cxx" -std=c++20 -x c++ - -o "$work/probe" -lpthread 2>/dev/null; then
  echo "skip: $cxx cannot build C++20 <barrier> programs"
  exit 0
fi
pass=0 fail=0
# harness | kernel (under tasks/) | g++ macro | params | args
cases=(
  "gemm|gemm_bf16/templates/cuda/mma_pipeline.cu|MMA_PIPE|TILE_M=64 TILE_N=64 WARPS=4 STAGES=3 GROUP_M=2|130 136 104"
  "gemm|gemm_bf16/templates/cuda/mma_pipeline.cu|MMA_PIPE||200 264 72"
  "gemm|gemm_bf16/templates/cuda/mma_pipeline.cu|MMA_PIPE|TILE_K=64 TILE_M=64 TILE_N=64 WARPS=4 STAGES=3|100 72 200"
  "gemm|gemm_bf16/templates/cuda/mma_pipeline.cu|MMA_PIPE|TILE_M=64 TILE_N=256 WARPS=4 STAGES=2 GROUP_M=1|70 129 35"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA||200 264 200"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA|TMA=0|200 264 200"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA|TMA=0 WGS=1 TILE_N=128 STAGES=3 GROUP_M=2|130 136 328"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA|TMA=0 MI=2 TILE_N=128 STAGES=5|300 264 72"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA|TMA=0 TILE_N=128 STAGES=6|70 129 35"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA|TMA=0 EMU_CP_EAGER=1 STAGES=3|136 256 320"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA||1 3 1"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA|TMA=0|1 3 1"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA|TMA=0 WS=1|7 1000 513"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA|TMA=0 WS=1|200 264 520"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA|TMA=0 WS=1 PERSIST=1 SMS=2 TILE_N=128 STAGES=3|300 200 136"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA|TMA=0 WS=1 PERSIST=1 SMS=3 STAGES=2 EMU_CP_EAGER=1|260 300 72"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA|TMA=0 PERSIST=1 SMS=2 TILE_N=128 STAGES=3 EMU_CP_EAGER=1|300 200 200"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA|TMA=0 WS=1 MI=2 TILE_N=128 STAGES=2|300 136 200"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA|TMA=0 WS=1 WGS=1 TILE_N=128 STAGES=3|70 129 35"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA|TMA=1|200 264 200"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA|TMA=1 WS=1 PERSIST=1 SMS=2 TILE_N=128 STAGES=3|300 200 136"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA|TMA=1 MI=2 TILE_N=128 STAGES=2|300 136 200"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA|TMA=1 WGS=1 TILE_N=128 STAGES=3|72 136 8"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA|TMA=1 PERSIST=1 SMS=3 STAGES=2|1 8 520"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA|TMA=1|7 1000 513"
  "gemm|gemm_bf16/templates/cuda/wgmma_pipeline.cu|WGMMA|TMA=1 WGS=1 TILE_N=128 STAGES=3|70 129 35"
  "gemm|gemm_bf16/templates/cuda/wmma_tiled.cu|WMMA|TILE_M=64 TILE_N=64 WARPS=4|70 129 35"
  "gemm|gemm_bf16/templates/cuda/simt_register.cu|SIMT|TILE_M=64 TILE_K=32|130 64 40"
  "gemm|gemm_bf16/baseline/cuda.cu|BASE||33 47 20"
  "attention|attention_prefill/templates/cuda/mma_flash.cu|MMA|BQ=64 BKV=32 WM=1|1 4 2 150 64"
  "attention|attention_prefill/templates/cuda/mma_flash.cu|MMA|BQ=128 BKV=64 WM=1|2 2 1 100 128"
  "attention|attention_prefill/templates/cuda/mma_flash.cu|MMA||1 8 2 300 128"
  "attention|attention_prefill/templates/cuda/mma_flash.cu|MMA|KU=4|1 4 4 190 128"
  "attention|attention_prefill/templates/cuda/mma_flash.cu|MMA|TREE=0 BKV=32|2 4 2 150 64"
  "attention|attention_prefill/templates/cuda/mma_flash.cu|MMA|LAZY=1 KU=2|2 3 3 321 64"
  "attention|attention_prefill/templates/cuda/mma_flash.cu|MMA|LAZY=1 WM=1 BQ=64|1 4 1 200 128"
  "attention|attention_prefill/templates/cuda/mma_flash.cu|MMA|BQ=128 BKV=32 WM=2 KU=8|1 6 2 257 128"
  "attention|attention_prefill/templates/cuda/mma_flash.cu|MMA|BQ=64 BKV=64 WM=2|2 3 1 130 64"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA||1 8 1 257 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=0|1 8 1 257 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA||2 3 1 130 64"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=0|2 3 1 130 64"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA||1 4 1 1 64"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=0|1 4 1 1 64"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=0|1 2 1 40 32 !trap"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=0 OVERLAP=0|2 3 1 257 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=0 OVERLAP=0 STAGES=3 BKV=64|1 8 1 130 64"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=0 WGS=1 BKV=64 STAGES=3|1 6 2 257 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=0 WGS=3 BKV=64|1 3 3 257 64"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=0 WGS=3 BKV=128 OVERLAP=0|1 2 1 200 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=0 EMU_CP_EAGER=1|1 2 1 400 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=0 EMU_CP_EAGER=1 OVERLAP=0 STAGES=3 BKV=64|1 2 1 300 64"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=1|1 8 1 257 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|LPT=1|2 6 2 257 64"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|LPT=1 WS=0 WGS=1|3 2 1 130 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=1 OVERLAP=0 BKV=64 STAGES=3|2 3 1 130 64"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=1 WGS=1|1 3 3 300 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=1 WGS=3 BKV=64|1 2 1 257 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=1 EMU_CP_EAGER=1|1 2 1 600 64"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=1|1 4 2 1 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=2|1 8 1 257 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=2 OVERLAP=0 BKV=64 STAGES=3|2 3 1 130 64"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=2 WGS=3 BKV=64|1 2 1 300 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=2 EMU_CP_EAGER=1|1 2 2 1 64"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|WS=2 OVERLAP=0|1 2 1 600 64"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|TMA=1|1 8 1 257 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|TMA=0|1 8 1 257 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|TMA=0 WS=1 OVERLAP=0 BKV=64 STAGES=3|2 3 1 130 64"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|TMA=1|2 3 1 130 64"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|TMA=1 WS=1 WGS=1|1 3 3 300 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|TMA=1 WS=1 OVERLAP=0 BKV=64 STAGES=3|2 3 1 130 64"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|TMA=1 WS=2 WGS=3 BKV=64|1 2 1 300 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|TMA=1|1 4 2 1 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|PERSIST=3 TMA=0|2 6 2 257 64"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|PERSIST=2 TMA=1|1 4 2 300 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|PERSIST=5 WS=1 OVERLAP=0 BKV=64 STAGES=3|2 3 1 130 64"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|PERSIST=4 WS=1 WGS=1|1 3 3 200 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|PERSIST=2 WS=2 WGS=3 BKV=64 TMA=1|1 2 1 300 128"
  "attention|attention_prefill/templates/cuda/wgmma_flash.cu|WGMMA|PERSIST=3 EMU_CP_EAGER=1|1 4 1 1 64"
  "attention|attention_prefill/templates/cuda/warp_query.cu|WARPQ|WARPS=4|2 4 2 77 64"
  "attention|attention_prefill/templates/cuda/warp_two_pass.cu|WARPQ|WARPS=8|1 2 1 70 128"
  "attention|attention_prefill/baseline/cuda.cu|BASE||1 2 1 40 64"
  "decode|decode_paged/templates/cuda/split_kv.cu|SPLIT|SPLIT_TOK=128 WARPS=4 UNROLL=2|3 8 2 128 20"
  "decode|decode_paged/templates/cuda/split_kv.cu|SPLIT|SPLIT_TOK=256 WARPS=2 UNROLL=4 GMAX=8|2 8 1 64 9 1"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|SPLIT_PAGES=8 WARPS=4 PIPE=1|3 8 2 128 20"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|SPLIT_PAGES=4 WARPS=2 PIPE=2|3 2 1 32 7 17"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|SPLIT_PAGES=8 WARPS=2 PIPE=1|2 6 2 64 9 1"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH||2 8 1 128 5"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH||3 6 2 48 3"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH||2 8 2 128 40"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|SPLIT_PAGES=8 WARPS=8 PIPE=1|2 16 2 128 20 7"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|SPLIT_PAGES=3 WARPS=2 PIPE=2|3 3 3 32 10 1"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|SPLIT_PAGES=2 SPLIT_BLOCKS=20 WARPS=2|3 8 2 128 20"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|PDL=1 SPLIT_PAGES=2 SPLIT_BLOCKS=20 WARPS=2|3 8 2 128 20"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|SPLIT_PAGES=1 SPLIT_BLOCKS=7 PIPE=1|2 6 2 64 9 1"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|MERGE=1 SPLIT_PAGES=4|3 8 2 128 20"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|MERGE=1 SPLIT_PAGES=2 WARPS=2 PIPE=1|2 6 2 64 9 0"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|MERGE=1 SPLIT_PAGES=3|3 6 2 48 7"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|MERGE=1 SPLIT_PAGES=8 WARPS=4|1 4 1 128 70 1"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|MERGE=1 SPLIT_PAGES=1 WARPS=8|1 8 2 128 40"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|MERGE=1 SPLIT_PAGES=1 WARPS=2|1 8 2 128 40"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|MERGE=1 SPLIT_PAGES=1 WARPS=4|2 8 1 32 70 1"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|MERGE=1 SPLIT_PAGES=1 WARPS=2|1 8 1 64 270"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|SPLIT_PAGES=128 WARPS=2 PIPE=1|1 4 1 64 140 2000"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|SPLIT_PAGES=1 WARPS=2|1 2 1 32 300"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|SPLIT_PAGES=1 WARPS=2|1 4 1 128 70"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|SPLIT_PAGES=1 WARPS=2 PIPE=1|2 2 2 64 66 3"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH||2 6 2 64 9 0"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|SPLIT_PAGES=16|3 8 2 128 16 1"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|HEAD_WAIT=1|2 8 2 128 40"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|HEAD_WAIT=1 SPLIT_PAGES=1 WARPS=2|1 4 1 128 70"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|HEAD_WAIT=1 SPLIT_PAGES=1 WARPS=2 PIPE=1|2 2 2 64 66 3"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|HEAD_WAIT=1 SPLIT_PAGES=2 SPLIT_BLOCKS=20 WARPS=2|3 8 2 128 20"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|HEAD_WAIT=1 SPLIT_PAGES=8 WARPS=2 PIPE=1|2 6 2 64 9 1"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|HEAD_WAIT=1 SPLIT_PAGES=2|2 6 2 64 9 0"
  "decode|decode_paged/templates/cuda/flash_decode.cu|FLASH|HEAD_WAIT=1 SPLIT_PAGES=3|3 6 2 48 7"
  "decode|decode_paged/templates/cuda/group_per_block.cu|GROUP|WARPS=4 UNROLL=2|3 8 2 128 5"
  "decode|decode_paged/templates/cuda/group_per_block.cu|GROUP|WARPS=2 UNROLL=4|2 2 1 32 3 1"
  "decode|decode_paged/templates/cuda/head_per_warp.cu|HPW|WARPS=2 UNROLL=2|3 4 4 32 2"
  "decode|decode_paged/baseline/cuda.cu|BASE||2 8 2 128 3"
  "routing|moe_routing/templates/cuda/fused_persistent.cu|FUSED|PERSISTENT=4 WARPS=4 --per-block-shared|37 256 8 3"
  "routing|moe_routing/templates/cuda/fused_persistent.cu|FUSED|PERSISTENT=8 WARPS=2 PF=2 --per-block-shared|45 8 2 2"
  "routing|moe_routing/templates/cuda/fused_persistent.cu|FUSED|PERSISTENT=4 WARPS=4 PF=8 --per-block-shared|300 64 8"
  "routing|moe_routing/templates/cuda/fused_persistent.cu|FUSED|PERSISTENT=2 WARPS=4 --per-block-shared|50 128 8"
  "routing|moe_routing/templates/cuda/fused_persistent.cu|FUSED|PERSISTENT=4 WARPS=1 --per-block-shared|20 3 3"
  "routing|moe_routing/templates/cuda/block_sort.cu|BSORT|ROWS=32 WARPS=4|100 64 8"
  "routing|moe_routing/templates/cuda/thread_select.cu|TSEL|THREADS=64|50 3 3"
  "routing|moe_routing/baseline/cuda.cu|BASE||70 16 4"
  "scan|selective_scan/templates/cuda/warp_scan.cu|WSCAN|ITEMS=16 WARPS=4 NU=1|1 5 4097"
  "scan|selective_scan/templates/cuda/warp_scan.cu|WSCAN|ITEMS=8 WARPS=2 NU=4|2 9 1000"
  "scan|selective_scan/templates/cuda/warp_scan.cu|WSCAN|ITEMS=16 WARPS=8 NU=4|3 7 257 0"
  "scan|selective_scan/templates/cuda/warp_scan.cu|WSCAN||2 3 1"
  "scan|selective_scan/templates/cuda/warp_scan.cu|WSCAN||1 6 1100"
  "scan|selective_scan/templates/cuda/warp_scan.cu|WSCAN|ITEMS=8 WARPS=4 NU=4 CPW=2|2 9 1000"
  "scan|selective_scan/templates/cuda/warp_scan.cu|WSCAN|ITEMS=16 WARPS=2 CPW=2|1 5 4097"
  "scan|selective_scan/baseline/cuda.cu|BASE||2 3 300"
  "attention|attention_prefill/templates/mlx/mma_flash.cu|MLXK||1 4 2 257 64"
  "attention|attention_prefill/templates/mlx/mma_flash.cu|MLXK|BQ=64 BKV=64 WM=1|2 2 1 100 128"
  "attention|attention_prefill/templates/mlx/mma_flash.cu|MLXK|BKV=32|1 6 3 200 128"
  "decode|decode_paged/templates/mlx/group_per_block.cu|MLXK||3 8 2 128 20"
  "decode|decode_paged/templates/mlx/group_per_block.cu|MLXK|WARPS=2 UNROLL=4 GMAX=8|2 8 1 64 9 1"
  "decode|decode_paged/templates/mlx/flash_decode.cu|MLXK|SPLIT_PAGES=1 WARPS=2|1 2 1 32 300"
  "decode|decode_paged/templates/mlx/flash_decode.cu|MLXK|SPLIT_PAGES=8 WARPS=4|3 8 2 128 20"
  "decode|decode_paged/templates/mlx/flash_decode.cu|MLXK|SPLIT_PAGES=1 WARPS=2 PIPE=1|2 2 2 64 66 3"
  "gemm|gemm_bf16/templates/mlx/mma_pipeline.cu|MLXK|TILE_M=64 TILE_N=64 WARPS=4 STAGES=3 GROUP_M=2|130 136 104"
  "gemm|gemm_bf16/templates/mlx/mma_pipeline.cu|MLXK||200 264 72"
  "routing|moe_routing/templates/mlx/fused_persistent.cu|MLXK|PERSISTENT=4 WARPS=4 --per-block-shared|37 256 8 2"
  "routing|moe_routing/templates/mlx/fused_persistent.cu|MLXK|PERSISTENT=8 WARPS=2 PF=2 --per-block-shared|45 8 2 2"
  "mamba_mlx|mamba_mlx/templates/mlx/chunked_scan.cu|CS||1 300 40"
  "mamba_mlx|mamba_mlx/templates/mlx/chunked_scan.cu|CS|U=4 CH=8 NCH=8|2 100 21"
  "mamba_mlx|mamba_mlx/templates/mlx/chunked_scan.cu|CS|U=1 NCH=4|1 33 17"
  "mamba_mlx|mamba_mlx/templates/mlx/chunked_scan.cu|CS|U=8 NCH=32 CH=8|1 7 9"
  "mamba_mlx|mamba_mlx/templates/mlx/chunked_scan.cu|CS|PREFIX=1|1 300 40"
  "mamba_mlx|mamba_mlx/templates/mlx/chunked_scan.cu|CS|PREFIX=0 U=4 CH=8 NCH=8|2 100 21"
  "mamba_mlx|mamba_mlx/templates/mlx/chunked_scan.cu|CS|PREFIX=1 U=1 NCH=6 CH=8|1 33 17"
  "mamba_mlx|mamba_mlx/templates/mlx/chunked_scan.cu|CS|PREFIX=0 U=8 NCH=32 CH=8|1 7 9"
  "mamba_mlx|mamba_mlx/templates/mlx/thread_per_channel.cu|TPC|TG=32|2 50 40"
)
# one case: its line ("ok ..." or "FAIL ...") into $work/res<i>
run_case() {
  local i=$1 c=$2 h k mac params argv want_trap src xp kn out=
  IFS='|' read -r h k mac params argv <<<"$c"
  # args ending in "!trap": the kernel must trap (a shape without an instance)
  want_trap=0
  if [[ $argv == *' !trap' ]]; then want_trap=1; argv=${argv% !trap}; fi
  src="$root/tasks/$k" xp=$params kn=KS_NONE
  if [[ $k == */templates/mlx/* && $h != mamba_mlx ]]; then
    # an MLX body of an issue-16 task: the source MLX would compile for the
    # case's axes (the harness's args, named as the task names them), its
    # launch from the launch line (ksmlx.py geometry), the harness's MLXK
    local names task ax=() w j=0 geo
    case $h in
      attention) names="batch heads_q heads_kv seqlen head_dim" ;;
      decode) names="batch heads_q heads_kv head_dim max_pages" ;;
      gemm) names="m n k" ;;
      routing) names="tokens experts topk" ;;
    esac
    read -r -a aw <<<"$argv"
    for w in $names; do ax+=("$w=${aw[$j]}"); j=$((j + 1)); done
    [[ $h == decode ]] && ax+=("num_pages=$((aw[0] * aw[4]))")
    task=$root/tasks/${k%%/*}/task.json
    # --per-block-shared is xform's (a grid-barrier body), the rest params
    local mp=${params//--per-block-shared/}
    # shellcheck disable=SC2086
    python3 "$root/mlx/ksmlx.py" source "$task" "$src" "${ax[@]}" $mp >"$work/m$i.cu" 2>"$work/cc$i.log" &&
      geo=$(python3 "$root/mlx/ksmlx.py" geometry "$task" "$src" "${ax[@]}" $mp 2>>"$work/cc$i.log")
    xp=""
    [[ $params == *--per-block-shared* ]] && xp=--per-block-shared
    src="$work/m$i.cu" mac="MLXK $geo"
    kn=$(grep -o 'custom_kernel_[A-Za-z0-9_]*' "$src" | head -1)
  elif [[ $mac == FLASH ]]; then
    # flash_decode: its launch lines evaluated for the case (cuda_launch.py),
    # so the harness launches what the template says, when= included
    local aw geo
    read -r -a aw <<<"$argv"
    # shellcheck disable=SC2086
    geo=$(python3 "$here/cuda_launch.py" "$root/tasks/decode_paged/task.json" "$src" \
      batch="${aw[0]}" heads_q="${aw[1]}" heads_kv="${aw[2]}" head_dim="${aw[3]}" \
      max_pages="${aw[4]}" num_pages=$((aw[0] * aw[4])) $params 2>"$work/cc$i.log") || geo=NO_LAUNCH_MACROS
    mac="FLASH $geo"
  elif [[ $h == mamba_mlx ]]; then
    # an MLX body: the source MLX would compile for these axes, then C++
    local mb ml md
    read -r mb ml md <<<"$argv"
    # shellcheck disable=SC2086
    python3 "$root/mlx/ksmlx.py" source "$root/tasks/mamba_mlx/task.json" "$src" \
      batch="$mb" seqlen="$ml" dim="$md" $params >"$work/m$i.cu" 2>"$work/cc$i.log"
    src="$work/m$i.cu" xp=""
    kn=$(grep -o 'custom_kernel_[A-Za-z0-9_]*' "$src" | head -1)
  fi
  # shellcheck disable=SC2086
  if python3 "$here/xform.py" "$src" "$work/k$i.cpp" $xp &&
    "$cxx" -std=c++20 -O1 -w -I"$here" -DKFILE="\"$work/k$i.cpp\"" $(for m in $mac; do printf -- '-D%s ' "$m"; done) -DKS_KERNEL="$kn" -o "$work/b$i" "$here/$h.cpp" -lpthread 2>>"$work/cc$i.log" &&
    if [[ $want_trap == 1 ]]; then
      out=$(timeout 300 "$work/b$i" $argv 2>&1)
      [[ $? != 0 && $out == *"trap "* ]] && out="trapped as it must"
    else
      out=$(timeout 300 "$work/b$i" $argv 2>&1)
    fi; then
    echo "ok   $k [$params] ($argv): $(tail -1 <<<"$out")" >"$work/res$i"
  else
    echo "FAIL $k [$params] ($argv): $(tail -c 600 "$work/cc$i.log" 2>/dev/null) ${out:-}" >"$work/res$i"
  fi
  rm -f "$work/b$i" "$work/k$i.cpp"
}
# EMU_JOBS cases at a time (default: the CPUs; most of a case is g++),
# reported in the table's order
jobs=${EMU_JOBS:-$(nproc)}
i=0
for c in "${cases[@]}"; do
  # EMU_ONLY=TEXT: only the cases whose line holds TEXT (while working on one)
  [[ -n ${EMU_ONLY:-} && $c != *"$EMU_ONLY"* ]] && continue
  i=$((i + 1))
  while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
  run_case "$i" "$c" &
done
wait
for ((j = 1; j <= i; j++)); do
  line=$(cat "$work/res$j" 2>/dev/null || echo "FAIL case $j: no result")
  echo "$line"
  if [[ $line == ok* ]]; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "cuda_emu: $pass passed, $fail failed"
[[ $fail -eq 0 ]]
