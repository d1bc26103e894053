"""Writes small Zarr arrays with zarr-python 3.4 and numcodecs' ZFPY, for
gozarr's codecs/zfp array tests; each NAME.zarr has NAME.npy beside it,
what zarr-python reads back from it.

Run in the reference chroot, from this directory:
    /work/shared/tools/zarr-python gen_arrays.py
"""
import os
import shutil
import warnings

import numcodecs
import numpy as np
import zarr
from zarr.codecs import ShardingCodec

warnings.simplefilter("ignore")  # numcodecs.zarr3 is deprecated in favour of zarr.codecs.numcodecs
from numcodecs.zarr3 import ZFPY  # noqa: E402

OUT = "arrays"


def values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    g = np.meshgrid(*[np.linspace(0, 2, n) for n in shape], indexing="ij")
    v = sum(np.cos(x * (k + 2)) for k, x in enumerate(g)) * 500 + rng.normal(0, 3, shape)
    return v.astype(dtype)


def v3(name, shape, chunks, dtype, codec, seed):
    a = zarr.create_array(f"{OUT}/{name}.zarr", shape=shape, chunks=chunks, dtype=dtype,
                          serializer=codec, compressors=None, fill_value=0)
    a[:] = values(shape, dtype, seed)
    np.save(f"{OUT}/{name}.npy", zarr.open_array(f"{OUT}/{name}.zarr")[:])


def v2(name, shape, chunks, dtype, codec, seed):
    a = zarr.create_array(f"{OUT}/{name}.zarr", shape=shape, chunks=chunks, dtype=dtype,
                          compressors=codec, zarr_format=2, fill_value=0)
    a[:] = values(shape, dtype, seed)
    np.save(f"{OUT}/{name}.npy", zarr.open_array(f"{OUT}/{name}.zarr")[:])


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    v3("v3_f8_rate", (10, 13), (4, 5), "f8", ZFPY(mode=2, rate=12), 1)
    v3("v3_f4_tolerance", (7, 9, 6), (4, 4, 5), "f4", ZFPY(mode=4, tolerance=1e-3), 2)
    v3("v3_i4_precision", (50,), (16,), "i4", ZFPY(mode=3, precision=20), 3)
    v3("v3_i8_reversible", (5, 6, 7, 3), (3, 4, 5, 2), "i8", ZFPY(mode=4), 4)
    v3("v3_f8_reversible", (9, 9), (5, 5), "f8", ZFPY(mode=2, rate=-1), 5)
    a = zarr.create_array(f"{OUT}/v3_f4_sharded.zarr", shape=(12, 10), chunks=(3, 5), shards=(6, 10),
                          dtype="f4", serializer=ZFPY(mode=3, precision=16), compressors=None, fill_value=0)
    a[:] = values((12, 10), "f4", 6)
    np.save(f"{OUT}/v3_f4_sharded.npy", zarr.open_array(f"{OUT}/v3_f4_sharded.zarr")[:])
    v2("v2_f8_tolerance", (11, 8), (4, 4), "<f8", numcodecs.ZFPY(mode=4, tolerance=0.01), 7)
    v2("v2_f4_reversible", (30,), (8,), "<f4", numcodecs.ZFPY(mode=2, rate=-1), 8)
    v2("v2_i4_rate", (6, 7), (6, 4), "<i4", numcodecs.ZFPY(mode=2, rate=10), 9)


main()
