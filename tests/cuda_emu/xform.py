#!/usr/bin/env python3
"""xform.py — turns a CUDA template into C++ for the CPU emulation (emu.h):
drops the CUDA includes and the inline-PTX helpers (cp16, cp_commit,
cp_wait, ldm_x4, ldm_x4_t, mma16816, smem_u32, ex2; the wgmma ones fence_async,
wg_fence, wg_commit, wg_wait, acc_fence, reg_fence, reg_alloc, reg_dealloc,
wg_bar, pp_sync, pp_arrive, wgmma_bf16, wgmma_ss, wgmma_rs; the mbarrier ones
mbar_init, mbar_arrive, cp_mbar_arrive, mbar_try_wait; the TMA ones
mbar_fence_init, mbar_expect_tx, tma_load_2d, tma_prefetch; the programmatic
launch ones pdl_trigger, pdl_wait), which emu.h
implements with the PTX ISA's register layouts, and points the dynamic shared
memory at the block's buffer. --per-block-shared (grid-barrier kernels, whose
blocks run at once): `__shared__ int a[N], b[M];` become per-block arrays.
Usage: xform.py IN.cu OUT.cpp [--per-block-shared] [NAME=VALUE...]"""
import re
import sys

src = open(sys.argv[1]).read()
args = sys.argv[3:]
per_block = "--per-block-shared" in args
defs = [a for a in args if "=" in a]
src = re.sub(r'#include <(cuda_bf16\.h|stdint\.h|mma\.h|math\.h|cooperative_groups\.h|cuda/std/\w+|cuda_fp16\.h)>\n',
             '', src)
# an MLX body's source (mlx/ksmlx.py source): no cooperative groups here,
# and its dynamic shared memory declared as floats
src = src.replace('namespace cg = cooperative_groups;\n', '')
src = re.sub(r'extern __shared__ (?:__align__\(\d+\) )?float (\w+)\[\];', r'float *\1 = (float *)g_dyn;', src)
for h in ['smem_u32', 'cp16', 'cp_commit', 'cp_wait', 'ldm_x4', 'ldm_x4_t', 'mma16816', 'ex2',
          'fence_async', 'wg_fence', 'wg_commit', 'wg_wait', 'acc_fence', 'reg_fence',
          'reg_alloc', 'reg_dealloc', 'wg_bar', 'pp_sync', 'pp_arrive',
          'wgmma_bf16', 'wgmma_ss', 'wgmma_rs',
          'mbar_init', 'mbar_arrive', 'cp_mbar_arrive', 'mbar_try_wait',
          'mbar_fence_init', 'mbar_expect_tx', 'tma_load_2d', 'tma_prefetch',
          'pdl_trigger', 'pdl_wait']:
    while True:
        m = re.search(r'(template <int N>\s+)?__device__ __forceinline__ [\w ]+?\b' + h + r'\(', src)
        if not m:
            break
        i = src.index('{', m.end())
        depth, j = 0, i
        while True:
            if src[j] == '{':
                depth += 1
            elif src[j] == '}':
                depth -= 1
                if depth == 0:
                    break
            j += 1
        src = src[:m.start()] + src[j + 1:]
src = re.sub(r'extern __shared__ __align__\(\d+\) unsigned char smem_raw\[\];',
             'unsigned char *smem_raw = g_dyn;', src)
if per_block:
    n = [0]

    def repl(m):
        names = re.findall(r'(\w+)\[[^\]]+\]', m.group(1))
        out = []
        for nm in names:
            out.append('*%s = blk_shared(%d)' % (nm, n[0]))
            n[0] += 1
        return '  int ' + ', '.join(out) + ';'
    src = re.sub(r'^  __shared__ int ((?:\w+\[[^\]]+\](?:, )?)+);', repl, src, flags=re.M)
    # the spin on the generation word: an atomic load on the CPU
    src = src.replace('volatile unsigned *vg = gen;', 'unsigned *vg = gen;')
    src = re.sub(r'(?<!unsigned )\*vg\b', '__atomic_load_n(vg, __ATOMIC_SEQ_CST)', src)
out = '#include "emu.h"\n' + ''.join('#define %s %s\n' % tuple(d.split('=', 1)) for d in defs) + src
open(sys.argv[2], 'w').write(out)
