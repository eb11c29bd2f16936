"""pairwise_mean_distance in C, compiled by the machine's C compiler with
its square roots vectorized: what two threads of such code get on this machine.

The two-thread target is measured on a kernel that cuvil_bc runs in vector square
roots. On the 2-vCPU CI machines, throughput-bound vector code scales less than a
scalar dependency chain does, whoever compiled it; this reference shows how much, in
the same run. `build()` returns None when there is no C compiler.
"""

from __future__ import annotations

import tempfile
from typing import Any, Callable

SOURCE = """
#include <math.h>
double pairwise_mean_distance(const double *pts, long n) {
    double s = 0.0;
    for (long i = 0; i < n; i++)
        for (long j = i + 1; j < n; j++) {
            double dx = pts[2 * i] - pts[2 * j], dy = pts[2 * i + 1] - pts[2 * j + 1];
            s += sqrt(dx * dx + dy * dy);
        }
    return s / (n * (n - 1) / 2.0);
}
"""


def build() -> Callable[[Any], float] | None:
    """The C kernel as a function of a C-contiguous (n, 2) float64 array, called
    through ctypes (which releases the GIL around the call)."""
    import ctypes
    import os
    import shutil
    import subprocess

    cc = shutil.which(os.environ.get("CC", "cc")) or shutil.which("gcc")
    if cc is None:
        return None
    folder = tempfile.mkdtemp(prefix="cuvil_c_reference_")
    src, lib = os.path.join(folder, "kernel.c"), os.path.join(folder, "kernel.so")
    with open(src, "w") as f:
        f.write(SOURCE)
    # -ffast-math lets the compiler reorder the sum, and so vectorize it.
    flags = ["-O3", "-march=native", "-ffast-math", "-shared", "-fPIC"]
    if subprocess.run([cc, *flags, src, "-o", lib, "-lm"], capture_output=True).returncode != 0:
        return None
    fn = ctypes.CDLL(lib).pairwise_mean_distance
    fn.argtypes, fn.restype = [ctypes.c_void_p, ctypes.c_long], ctypes.c_double

    def kernel(pts: Any) -> float:
        return fn(pts.ctypes.data, pts.shape[0])

    return kernel
