#!/usr/bin/env python3
"""bench/neighbour.py — a seeded noisy neighbour for the CPU benchmarks
(bench/noise_choice.sh, bench/ceiling_spread.sh with NOISE=1): one thread
copying 256 MiB with numpy (memory traffic, and one core taken from the
kernel's two) for 0.2-2 s at random, then idle 0.2-2 s, forever, as this
shared machine's neighbours were when issues 20 and 21 were measured (38 to
77 GB/s within hours). The pattern is seeded (argv[1], default 7), so two
runs see the same kind of noise. argv[2] `slow`: on and off for 10-30 s
each instead, so that one evaluation (1-3 s) mostly sees one regime, as
when the machine's bandwidth moved between minutes. Kill it to stop it."""
import random
import sys
import time

import numpy as np

random.seed(int(sys.argv[1]) if len(sys.argv) > 1 else 7)
lo, hi = (10.0, 30.0) if len(sys.argv) > 2 and sys.argv[2] == "slow" else (0.2, 2.0)
a = np.ones(64 << 20, dtype=np.float32)
b = np.empty_like(a)
while True:
    end = time.time() + random.uniform(lo, hi)
    while time.time() < end:
        np.copyto(b, a)
    time.sleep(random.uniform(lo, hi))
