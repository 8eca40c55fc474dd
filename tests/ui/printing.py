import warp as wp

FMT = "%d\n"


@wp.kernel
def strings(a: wp.array(dtype=float), n: wp.array(dtype=int)):
    i = wp.tid()
    print(f"i = {i}")  # ERROR TC0401: f-strings in a kernel
    print("i = {}".format(i))  # ERROR TC0401: str.format in a kernel
    print("i", i)  # ERROR TC0401: print() of 2 values
    wp.printf("%d\n", a[i])  # ERROR TC0303: `%d` prints an integer, got a float32 scalar
    wp.printf("%.3f\n", n[i])  # ERROR TC0303: `%.3f` prints a float, got an int32 scalar
    wp.printf("%n\n", i)  # ERROR TC0303: `%n` is not a conversion tilec prints
    wp.printf("%*d\n", i, i)  # ERROR TC0303: `%*` is not a conversion tilec prints
    wp.printf("%d %d\n", i)  # ERROR TC0303: `%d` has no argument
    wp.printf("%d\n", i, n[i])  # ERROR TC0303: 1 argument(s) more than the format's 1 conversion(s)
    wp.printf(FMT, i)  # ERROR TC0305: the format of wp.printf must be a string literal
    wp.printf("%s\n", i)  # ERROR TC0303: `%s` prints a string literal, got an int32 scalar
    wp.printf("%d\n", "text")  # ERROR TC0303: a string literal is printed with `%s`, not `%d`
    wp.printf("%f\n", wp.tile_ones(shape=4, dtype=float))  # ERROR TC0203: wp.printf prints scalars
