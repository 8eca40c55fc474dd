import argparse
import os

import numpy as np
import warp as wp

DATA = np.zeros(4)  # host value: not a constant, never read by a kernel


def helper_on_host(x):
    return [i * 2 for i in range(x)]  # comprehensions are fine outside kernels


class Config:
    size = 3


@wp.kernel(module="unique", enable_backward=False)
def k(A: wp.array1d(dtype=float)):
    A[wp.tid()] = 1.0


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    os.remove("never-executed-by-tilec")
