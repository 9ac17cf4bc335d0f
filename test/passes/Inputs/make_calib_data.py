#!/usr/bin/python3
"""Write calibration data sets for the calibrate/quantize lit tests.

    make_calib_data.py OUT_DIR

OUT_DIR/small      a.npy [2,3] (one sample) and b.npy [4,3] (a batch of two
                   samples of [2,3]): the samples, in order, are
                     a     [[-1, 0.5, 2], [0.25, -0.5, 1]]     min -1,   max 2
                     b[0]  [[-3, 1, 0], [0, 0, 0]]              min -3,   max 1
                     b[1]  [[0.5, 4, -0.5], [1, 1, 1]]          min -0.5, max 4
OUT_DIR/dist       four samples [1,4096] of a deterministic Laplace-shaped
                   distribution (0.5 + the inverse CDF at evenly spaced
                   points, no random numbers), scaled by 1, 1.25, 1.5, 1.75,
                   each with one outlier 10 + s at the end
OUT_DIR/nan        one [2,3] sample holding a NaN
OUT_DIR/shape      one [3,2] sample (wrong shape for a [2,3] input)
OUT_DIR/f64        one [2,3] float64 sample (wrong element type)
OUT_DIR/batch5     one [5,3] array (not a multiple of 2 rows)
OUT_DIR/empty      nothing usable (a README only)
OUT_DIR/two        per-sample directories s0, s1 with x.npy [2,3] and
                   y.npy [3] for a two-input graph; s2 lacks y.npy
OUT_DIR/list.txt   a list file naming small/a.npy and small/b.npy
"""
import os
import math
import sys

import numpy as np


def save(path, arr, dtype=np.float32):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    np.save(path, np.asarray(arr, dtype=dtype))


def dist_samples():
    # Laplace(0, 1) quantiles (heavy tails: clipping pays off), shifted by
    # 0.5 so that the distribution is asymmetric around 0
    base = []
    for k in range(4095):
        u = (k + 0.5) / 4095 - 0.5
        base.append(0.5 - math.copysign(math.log(1 - 2 * abs(u)), u))
    out = []
    for s in range(4):
        v = [x * (1.0 + 0.25 * s) for x in base] + [10.0 + s]
        out.append(np.array(v, dtype=np.float32).reshape(1, 4096))
    return out


def main():
    out = sys.argv[1]
    save(f"{out}/small/a.npy", [[-1, 0.5, 2], [0.25, -0.5, 1]])
    save(f"{out}/small/b.npy", [[-3, 1, 0], [0, 0, 0], [0.5, 4, -0.5],
                                [1, 1, 1]])
    for s, x in enumerate(dist_samples()):
        save(f"{out}/dist/s{s}.npy", x)
    save(f"{out}/nan/a.npy", [[1, 2, 3], [4, float("nan"), 6]])
    save(f"{out}/shape/a.npy", [[1, 2], [3, 4], [5, 6]])
    save(f"{out}/f64/a.npy", [[1, 2, 3], [4, 5, 6]], np.float64)
    save(f"{out}/batch5/a.npy", np.zeros((5, 3)))
    os.makedirs(f"{out}/empty", exist_ok=True)
    with open(f"{out}/empty/README", "w") as f:
        f.write("no data here\n")
    for s in range(3):
        save(f"{out}/two/s{s}/x.npy", np.full((2, 3), s + 1.0))
        if s < 2:
            save(f"{out}/two/s{s}/y.npy", [-1.0 - s, 0.0, 2.0])
    with open(f"{out}/list.txt", "w") as f:
        f.write("# the small set through a list file\n\nsmall/a.npy\n"
                "small/b.npy\n")


if __name__ == "__main__":
    main()
