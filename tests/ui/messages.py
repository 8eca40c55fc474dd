import math

import numpy as np
import warp as wp
from numpy import sqrt

SCALE = 2.0


@wp.kernel
def messages(A: wp.array1d(dtype=float)):
    i = wp.tid()
    x = A[i]
    y = wp.expp(x)  # ERROR TC0302: unknown tile API function `expp`
    z = np.exp(x)  # ERROR TC0301: numpy is not available in kernels; use wp.exp
    w = math.exp(x)  # ERROR TC0301: math is not available in kernels; use wp.exp
    v = sqrt(x)  # ERROR TC0301: numpy is not available in kernels; use wp.sqrt
    s = np.sum(x)  # ERROR TC0301: numpy is not available in kernels; use wp.tile_sum
    q = np.frobnicate(x)  # ERROR TC0301: numpy is not available in kernels
    p = x * math.log(2.0)  # ERROR TC0301: math is not available in kernels; use wp.log
    t = wp.tile_load(A, shape=(4,))
    u = wp.volume_sample_index(t)  # ERROR TC0430: `volume_sample_index` is a Warp builtin not supported by tilec yet
    r = wp.tile_srot(t)  # ERROR TC0302: unknown tile API operation `tile_srot`
    m = wp.tile_sim(t)  # ERROR TC0302: unknown tile API operation `tile_sim`
    e = wp.sqr(x)  # ERROR TC0302: unknown tile API function `sqr`
    c = xx + SCALES  # ERROR TC0301: unknown name `xx`
    d = x + SCALES  # ERROR TC0301: unknown name `SCALES`
    A[i] = x
