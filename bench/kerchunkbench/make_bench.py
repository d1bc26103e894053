"""Benchmark data and the peers of bench/kerchunkbench: a NetCDF-4 variable
(zlib level 4 + shuffle, as netCDF4 writes it), kerchunk references to it
made from h5py's chunk addresses, and h5py's / netCDF4's time to read it
whole.

    ../../../shared/tools/zarr-python make_bench.py gen /tmp/kbench [MiB]
    ../../../shared/tools/zarr-python make_bench.py time /tmp/kbench [reads]

gen writes DIR/bench.nc (MiB of float32, chunks 1x256x256) and
DIR/bench.json; time reads the variable whole with h5py and with netCDF4
and prints one JSON line: {"h5py_s", "h5py_cpu_s", "netcdf4_s",
"netcdf4_cpu_s", "bytes"} (best wall time of the reads, and the process
CPU time of that read).
"""
import json
import os
import sys
import time

import h5py
import netCDF4
import numpy as np


def gen(out, mib):
    os.makedirs(out, exist_ok=True)
    nc = os.path.join(out, "bench.nc")
    ny = nx = 512
    nt = mib * (1 << 20) // (ny * nx * 4)
    if not os.path.exists(nc):
        with netCDF4.Dataset(nc + ".tmp", "w") as d:
            d.createDimension("time", nt)
            d.createDimension("y", ny)
            d.createDimension("x", nx)
            v = d.createVariable("temp", "f4", ("time", "y", "x"), zlib=True, shuffle=True, complevel=4,
                                 chunksizes=(1, 256, 256))
            yy, xx = np.meshgrid(np.arange(ny), np.arange(nx), indexing="ij")
            rng = np.random.default_rng(1)
            for t in range(nt):
                v[t] = (250 + 20 * np.sin(xx / 40.0 + t / 7.0) * np.cos(yy / 55.0)
                        + rng.normal(scale=0.5, size=(ny, nx))).astype("f4")
        os.rename(nc + ".tmp", nc)
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


def best(fn, n):
    ts = []
    for _ in range(n):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        ts.append((time.perf_counter() - t0, time.process_time() - c0))
    return min(ts)


def timing(out, n):
    nc = os.path.join(out, "bench.nc")
    with h5py.File(nc, "r") as h:
        ds = h["temp"]
        h5, h5cpu = best(lambda: ds[...], n)
        nbytes = ds.size * 4
    with netCDF4.Dataset(nc) as d:
        v = d["temp"]
        v.set_auto_maskandscale(False)
        n4, n4cpu = best(lambda: v[...], n)
    print(json.dumps({"h5py_s": h5, "h5py_cpu_s": h5cpu, "netcdf4_s": n4, "netcdf4_cpu_s": n4cpu, "bytes": nbytes}))


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("gen", "time"):
        sys.exit(__doc__)
    if sys.argv[1] == "gen":
        gen(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 256)
    else:
        timing(sys.argv[2], int(sys.argv[3]) if len(sys.argv) > 3 else 1)
