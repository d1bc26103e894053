"""zarr-python 3.4's side of bench/zarrsbench: zarrs' zarr_benchmarks
(github.com/zarrs/zarr_benchmarks) workloads, written for this project.

    zarr-python zarr_python_zarrsbench.py gen PATH LAYOUT N
    zarr-python zarr_python_zarrsbench.py read PATH all|chunks|subchunks CONC
    zarr-python zarr_python_zarrsbench.py roundtrip PATH OUT
    zarr-python zarr_python_zarrsbench.py verify PATH

gen writes an N^3 uint16 array in LAYOUT (uncompressed: N/4 chunks;
compressed: the same with zstd level 0, no checksum; sharded: N/4 shards
of N/16 inner chunks, zstd level 0 inside) holding zarrs' benchmark values
v = (x + y*y//32 + z*z*z) % 65536 at [z, y, x].

read times the read the way zarrs' zarr_python_benchmark_read.py does it:
"all" is one a[:], "chunks"/"subchunks" read every chunk (shard) or inner
chunk as a slice, CONC at a time (1: one after another with the sync API;
more: asyncio tasks under a semaphore), with zarr.config async.concurrency
10 as there. roundtrip is out[:] = a[:] into a new array with the same
codecs. Each prints one JSON line: {"seconds": timed region, "checked": n}
after checking sample values against the formula; verify checks all.
"""
import asyncio
import json
import sys
import time

import numpy as np
import zarr
from zarr.codecs import ZstdCodec
from zarr.storage import LocalStore

zarr.config.set({"async.concurrency": 10})


def values(o, s):
    """The benchmark values of the box at offset o, shape s (z, y, x)."""
    z = np.arange(o[0], o[0] + s[0], dtype=np.uint64)[:, None, None]
    y = np.arange(o[1], o[1] + s[1], dtype=np.uint64)[None, :, None]
    x = np.arange(o[2], o[2] + s[2], dtype=np.uint64)[None, None, :]
    return ((x + (y * y) // 32 + z * z * z) % 65536).astype(np.uint16)


def gen(path, layout, n):
    n = int(n)
    c = n // 4
    kw = dict(shape=(n, n, n), dtype="uint16", fill_value=0, zarr_format=3)
    zstd = ZstdCodec(level=0, checksum=False)
    if layout == "uncompressed":
        kw.update(chunks=(c, c, c), compressors=None)
    elif layout == "compressed":
        kw.update(chunks=(c, c, c), compressors=zstd)
    elif layout == "sharded":
        kw.update(shards=(c, c, c), chunks=(c // 4,) * 3, compressors=zstd)
    else:
        raise SystemExit("unknown layout " + layout)
    a = zarr.create_array(store=LocalStore(path), overwrite=True, **kw)
    for i in np.ndindex(4, 4, 4):
        o = [k * c for k in i]
        a[o[0]:o[0] + c, o[1]:o[1] + c, o[2]:o[2] + c] = values(o, (c, c, c))
    print(json.dumps({"seconds": 0, "checked": n * n * n}))


def sample_check(out, o, rng):
    """Checks 64 random values of out (the box at o) against the formula."""
    for _ in range(64):
        p = [int(rng.integers(0, s)) for s in out.shape]
        want = values([o[k] + p[k] for k in range(3)], (1, 1, 1))[0, 0, 0]
        if out[tuple(p)] != want:
            raise SystemExit("value at %s: %s, want %s" % ([o[k] + p[k] for k in range(3)], out[tuple(p)], want))
    return 64


def boxes(a, sub):
    shape = a.shape
    cs = a.chunks if sub else (a.shards or a.chunks)
    grid = [(d + c - 1) // c for d, c in zip(shape, cs)]
    for i in np.ndindex(*grid):
        o = [k * c for k, c in zip(i, cs)]
        yield o, tuple(slice(k, min(k + c, d)) for k, c, d in zip(o, cs, shape))


async def read_async(a, sub, conc, rng):
    sem = asyncio.Semaphore(conc)
    checked = [0]

    async def one(o, sl):
        async with sem:
            out = await a._async_array.getitem(sl)
        checked[0] += sample_check(out, o, rng)

    async with asyncio.TaskGroup() as tg:
        for o, sl in boxes(a, sub):
            tg.create_task(one(o, sl))
    return checked[0]


def read(path, mode, conc):
    conc = int(conc)
    rng = np.random.default_rng(1)
    a = zarr.open_array(store=LocalStore(path, read_only=True), mode="r")
    t0 = time.perf_counter()
    if mode == "all":
        out = a[:]
        t = time.perf_counter() - t0
        checked = sample_check(out, [0, 0, 0], rng)
    elif conc == 1:
        checked = 0
        for o, sl in boxes(a, mode == "subchunks"):
            checked += sample_check(a[sl], o, rng)
        t = time.perf_counter() - t0
    else:
        checked = asyncio.run(read_async(a, mode == "subchunks", conc, rng))
        t = time.perf_counter() - t0
    print(json.dumps({"seconds": t, "checked": checked}))


def roundtrip(path, out):
    a = zarr.open_array(store=LocalStore(path, read_only=True), mode="r")
    b = zarr.create(store=LocalStore(out), mode="w", shape=a.shape, chunks=a.chunks,
                    dtype=a.dtype, codecs=a.metadata.codecs, fill_value=a.fill_value)
    t0 = time.perf_counter()
    b[:] = a[:]
    t = time.perf_counter() - t0
    checked = sample_check(b[:64, :64, :64], [0, 0, 0], np.random.default_rng(2))
    print(json.dumps({"seconds": t, "checked": checked}))


def verify(path):
    a = zarr.open_array(store=LocalStore(path, read_only=True), mode="r")
    got = a[:]
    want = values([0, 0, 0], a.shape)
    if not np.array_equal(got, want):
        bad = np.argwhere(got != want)[0]
        raise SystemExit("%s: value at %s is %s, want %s" % (path, list(bad), got[tuple(bad)], want[tuple(bad)]))
    print(json.dumps({"seconds": 0, "checked": int(got.size)}))


if __name__ == "__main__":
    {"gen": gen, "read": read, "roundtrip": roundtrip, "verify": verify}[sys.argv[1]](*sys.argv[2:])
