"""Import first (before numpy) in scripts that sample: one BLAS thread.

The sampled matrices are small (n ≤ 512); a multi-threaded OpenBLAS only adds contention,
and on a busy machine it made the samplers ~50x slower (10 s instead of 0.2 s for eight
n = 256 spectra).  Explicit settings in the environment are kept.
"""
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")
