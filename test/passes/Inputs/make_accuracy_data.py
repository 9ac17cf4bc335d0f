#!/usr/bin/python3
"""Write the calibration data of the equalize / bias-correction lit tests.

    make_accuracy_data.py OUT_DIR

OUT_DIR/absorb  a.npy zeros [1,1,3,3], b.npy ones [1,1,3,3] (two samples)
OUT_DIR/bc      a.npy [1, 2], b.npy [3, 0], each [1,2,1,1] (two
                samples: the channel means are [2, 1])
"""
import os
import sys

import numpy as np


def main():
    out = sys.argv[1]
    for d in ("absorb", "bc"):
        os.makedirs(os.path.join(out, d), exist_ok=True)
    shape = (1, 1, 3, 3)
    np.save(os.path.join(out, "absorb", "a.npy"), np.zeros(shape, np.float32))
    np.save(os.path.join(out, "absorb", "b.npy"), np.ones(shape, np.float32))
    for name, v in (("a", [1, 2]), ("b", [3, 0])):
        np.save(os.path.join(out, "bc", name + ".npy"),
                np.array(v, np.float32).reshape(1, 2, 1, 1))


if __name__ == "__main__":
    main()
