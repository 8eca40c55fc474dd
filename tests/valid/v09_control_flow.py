import warp as wp


@wp.kernel
def k(A: wp.array1d(dtype=int), n: int):
    i = wp.tid()
    total = 0
    for j in range(n):
        if j % 2 == 0:
            continue
        if total > 100:
            break
        total += j
    while total > 10:
        total -= 3
    A[i] = total if total > 0 else -1
