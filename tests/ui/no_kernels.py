import warp as wp

N = 4


@wp.func
def helper(x: float):
    return x * 2.0
