"""Times Debian's zfpy (the C library, one thread) on the arrays of
codecs/zfp's BenchmarkVsZfpy: for each DIR/<name>.bin of cases.json,
compress and decompress repeatedly and print "name encode_s decode_s
bytes": CPU seconds per call (time.process_time, best of several rounds;
the machine may be shared, so wall time would count other processes).

    /work/shared/tools/zarr-python bench.py DIR
"""
import json
import sys
import time

import numpy as np
import zfpy

top = sys.argv[1]
for c in json.load(open(top + "/cases.json")):
    a = np.fromfile("%s/%s.bin" % (top, c["name"]), dtype="<" + c["dtype"]).reshape(c["shape"])
    enc = zfpy.compress_numpy(a, **c["params"])

    def best(f, budget=0.6):
        f()
        n, t0 = 0, time.process_time()
        while time.process_time() - t0 < 0.1:
            f()
            n += 1
        per = []
        for _ in range(5):
            t1 = time.process_time()
            for _ in range(n):
                f()
            per.append((time.process_time() - t1) / n)
        return min(per)

    te = best(lambda: zfpy.compress_numpy(a, **c["params"]))
    td = best(lambda: zfpy.decompress_numpy(enc))
    print(c["name"], te, td, len(enc), flush=True)
