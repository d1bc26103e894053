"""Make the rectilinear chunk grid fixtures of testdata/rectilinear (issue 26)
with zarr-python 3.4 (its experimental "rectilinear" chunk_grid, zarr-extensions'
chunk-grids/rectilinear).

Run from the repository root in the zarr-python chroot:

    ../shared/tools/zarr-python testdata/rectilinear/make_rectilinear.py

Every fixture is NAME.zarr (a Zarr v3 array) beside NAME.npy, the values
zarr-python reads back from it. Some arrays leave chunks unwritten, so the fill
value is read too. The script is deterministic: running it again rewrites the
same bytes.
"""

import os
import shutil

import numpy as np
import zarr
from zarr.codecs import ZstdCodec
from zarr.core.metadata.v3 import RectilinearChunkGridMetadata

HERE = os.path.dirname(os.path.abspath(__file__))
zarr.config.set({"array.rectilinear_chunks": True})


def make(name, data, chunks, fill=0, shards=None, written=None, compressors="auto"):
    path = os.path.join(HERE, name + ".zarr")
    shutil.rmtree(path, ignore_errors=True)
    kw = {}
    if compressors != "auto":
        kw["compressors"] = compressors
    a = zarr.create_array(path, shape=data.shape, chunks=chunks, shards=shards,
                          dtype=data.dtype, fill_value=fill, zarr_format=3, **kw)
    if written is None:
        a[...] = data
    else:
        a[written] = data[written]
    got = zarr.open_array(path, mode="r")[...]
    np.save(os.path.join(HERE, name + ".npy"), got)
    print(name, open(os.path.join(path, "zarr.json")).read().split('"chunk_grid"')[1].split('"chunk_key')[0].replace("\n", " "))


zs = [ZstdCodec(level=3)]
# Two dimensions: explicit edges and run-length encoded ones, zstd.
make("r2d_int32", np.arange(10 * 13, dtype="<i4").reshape(10, 13),
     [[3, 7], [4, 4, 5]], compressors=zs)
# Three dimensions: a dimension of one edge (bare integer), edges ending
# past the array, chunks left unwritten (fill 7).
make("r3d_uint16_partial", (np.arange(5 * 6 * 7, dtype="<u2") * 3).reshape(5, 6, 7),
     [[2, 3], 4, [1, 2, 4]], fill=7, written=(slice(0, 2), slice(None), slice(1, 7)),
     compressors=zs)
# One dimension of many runs, float64, no compressor.
make("r1d_f64_runs", np.linspace(-1, 1, 100, dtype="<f8"),
     [[1] * 10 + [5] * 4 + [10] * 3 + [20] * 2], compressors=None)
# Sharded: shards of varying shapes, inner chunks of 2 x 2 (every edge a
# multiple), one shard left unwritten.
make("r2d_sharded", np.arange(12 * 10, dtype="<i2").reshape(12, 10),
     (2, 2), shards=[[4, 8], [6, 4]], fill=-1, written=(slice(0, 12), slice(0, 6)), compressors=zs)
# Edges overflowing the array by more than one chunk (the spec allows it;
# zarr-python takes them as a grid metadata object), written in two steps.
make("r2d_overhang_u8", (np.arange(6 * 5, dtype="u1") + 100).reshape(6, 5),
     RectilinearChunkGridMetadata(chunk_shapes=((4, 4, 4), (2, 3, 9, 9))), fill=1,
     written=(slice(0, 6), slice(0, 4)), compressors=zs)
