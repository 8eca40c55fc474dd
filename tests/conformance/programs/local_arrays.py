import warp as wp


@wp.func
def fill_counts(arr: wp.array2d(dtype=int), base: int):
    for i in range(arr.shape[0]):
        for j in range(arr.shape[1]):
            arr[i][j] = base + i * arr.shape[1] + j


@wp.func
def row_sum(row: wp.array(dtype=float)):
    total = float(0.0)
    for k in range(row.shape[0]):
        total += row[k]
    return total


@wp.kernel
def local_arrays(x: wp.array(dtype=float), counts: wp.array2d(dtype=int), y: wp.array(dtype=float),
                 v: wp.array(dtype=wp.vec3)):
    i = wp.tid()
    grid = wp.zeros(shape=(2, 3), dtype=int)
    fill_counts(grid, i)
    part = grid[:, 1:]
    counts[i, 0] = grid[1][2] + part[0, 1] * 10 + grid.shape[0] * 100
    counts[i, 1] = part.shape[1]
    weights = wp.zeros(shape=4, dtype=float)
    for k in range(4):
        weights[k] = x[i] * float(k + 1)
    y[i] = row_sum(weights) + weights[3]
    points = wp.zeros(shape=(3,), dtype=wp.vec3)
    points[1] = wp.vec3(x[i], 2.0, 3.0)
    for k in range(2):
        scratch = wp.zeros(shape=2, dtype=float)  # zeroed again on every trip
        scratch[k] += 1.0
        y[i] += scratch[0] + scratch[1]
    v[i] = points[1] + points[0] * 2.0
