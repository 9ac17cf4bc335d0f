"""Print .npy files for FileCheck: `NAME dtype shape values` per file.

Usage: /usr/bin/python3 show_npy.py FILE...
"""
import sys

import numpy as np

for path in sys.argv[1:]:
    a = np.load(path)
    print("%s %s %s %s" % (path.rsplit("/", 1)[-1], a.dtype, list(a.shape),
                           " ".join(repr(v) for v in a.ravel().tolist())))
