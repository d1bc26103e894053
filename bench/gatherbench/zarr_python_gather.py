"""zarr-python's side of gatherbench: times one oindex or vindex read.

    zarr_python_gather.py REPS oindex ARRAY ROWS.npy
    zarr_python_gather.py REPS vindex ARRAY P0.npy P1.npy P2.npy

Prints the median wall time and the median CPU time of the process (all
its threads), in seconds, of the read alone (the array is opened and the
indices loaded first).
"""
import statistics
import sys
import time

import numpy as np
import zarr

reps, mode, path = int(sys.argv[1]), sys.argv[2], sys.argv[3]
z = zarr.open_array(path, mode="r")
idx = [np.load(f) for f in sys.argv[4:]]
times, cpus = [], []
for _ in range(reps):
    t0, c0 = time.perf_counter(), time.process_time()
    if mode == "oindex":
        out = z.oindex[idx[0], :]
    else:
        out = z.vindex[tuple(idx)]
    times.append(time.perf_counter() - t0)
    cpus.append(time.process_time() - c0)
    del out
print(statistics.median(times), statistics.median(cpus))
