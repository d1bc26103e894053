"""Benchmark data for bench/kerchunkbench: a NetCDF-4 variable (zlib + shuffle,
as netCDF4 writes it), kerchunk references to it made from h5py's chunk
addresses, and h5py's / netCDF4's time to read it whole.

    ../../../shared/tools/zarr-python make_bench.py /tmp/kbench [MiB]

prints one JSON line: {"h5py_s": ..., "netcdf4_s": ..., "bytes": ...}.
"""
import json
import os
import sys
import time

import h5py
import netCDF4
import numpy as np

out = sys.argv[1]
mib = int(sys.argv[2]) if len(sys.argv) > 2 else 256
os.makedirs(out, exist_ok=True)
nc = os.path.join(out, "bench.nc")
ny = nx = 512
nt = mib * (1 << 20) // (ny * nx * 4)
if not os.path.exists(nc):
    with netCDF4.Dataset(nc, "w") as d:
        d.createDimension("time", nt)
        d.createDimension("y", ny)
        d.createDimension("x", nx)
        v = d.createVariable("temp", "f4", ("time", "y", "x"), zlib=True, shuffle=True, complevel=4, chunksizes=(1, 256, 256))
        yy, xx = np.meshgrid(np.arange(ny), np.arange(nx), indexing="ij")
        rng = np.random.default_rng(1)
        for t in range(nt):
            v[t] = (250 + 20 * np.sin(xx / 40.0 + t / 7.0) * np.cos(yy / 55.0) + rng.normal(scale=0.5, size=(ny, nx))).astype("f4")
with h5py.File(nc, "r") as h:
    ds = h["temp"]
    refs = {".zgroup": {"zarr_format": 2},
            "temp/.zarray": {"zarr_format": 2, "shape": list(ds.shape), "chunks": list(ds.chunks), "dtype": "<f4",
                             "fill_value": None, "order": "C", "compressor": None,
                             "filters": [{"id": "shuffle", "elementsize": 4}, {"id": "zlib", "level": 4}]}}
    for i in range(ds.id.get_num_chunks()):
        info = ds.id.get_chunk_info(i)
        key = ".".join(str(o // c) for o, c in zip(info.chunk_offset, ds.chunks))
        refs["temp/" + key] = ["bench.nc", int(info.byte_offset), int(info.size)]
with open(os.path.join(out, "bench.json"), "w") as f:
    json.dump({"version": 1, "refs": refs}, f)

def best(fn, n=3):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return min(ts)

with h5py.File(nc, "r") as h:
    ds = h["temp"]
    h5 = best(lambda: ds[...])
    nbytes = ds.size * 4
with netCDF4.Dataset(nc) as d:
    v = d["temp"]
    v.set_auto_maskandscale(False)
    n4 = best(lambda: v[...])
print(json.dumps({"h5py_s": h5, "netcdf4_s": n4, "bytes": nbytes}))
