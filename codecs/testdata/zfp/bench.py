"""Times Debian's zfpy (the C library, one thread) on the arrays of
codecs/zfp's BenchmarkVsZfpy: for each DIR/<name>.bin of cases.json,
compress and decompress repeatedly and print "name encode_s decode_s
bytes": the median CPU seconds per call (time.process_time around each
call, for about 0.5 s of calls; the machine may be shared, so wall time
would count other processes, and the median passes over disturbed calls).

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

    def median(f, budget=0.5):
        f()
        per = []
        start = time.process_time()
        while time.process_time() - start < budget or len(per) < 5:
            t0 = time.process_time()
            f()
            per.append(time.process_time() - t0)
        per.sort()
        return per[len(per) // 2]

    te = median(lambda: zfpy.compress_numpy(a, **c["params"]))
    td = median(lambda: zfpy.decompress_numpy(enc))
    print(c["name"], te, td, len(enc), flush=True)
