"""Regenerates the compatibility fixtures of this folder (issue 11, findings
12, 13 and 16): small arrays as other writers store them, each with the
values zarr-python reads from it as <name>.npy.

Run from the module root with the reference chroot (../shared/tools):

    ../shared/tools/zarr-python codecs/testdata/compat/gen.py

It needs zarr-python 3 and numcodecs; the generated files are committed, so
the tests (codecs/compat_test.go) do not need it.
"""

import json
import os
import shutil
import warnings

import numpy as np
import zarr
import zarr.codecs.numcodecs as nc
import numcodecs

warnings.filterwarnings("ignore")  # numcodecs codecs are not in the v3 spec

HERE = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(11)


def out(name):
    p = os.path.join(HERE, name + ".zarr")
    shutil.rmtree(p, ignore_errors=True)
    return p


def save(name, path):
    """Reads the array back with zarr-python and stores what it reads."""
    got = zarr.open_array(path, mode="r")[...]
    np.save(os.path.join(HERE, name + ".npy"), got)
    return got


def edit_zarray(path, **fields):
    """Rewrites fields of a v2 array's compressor, as another writer would
    have written them."""
    zp = os.path.join(path, ".zarray")
    with open(zp) as f:
        meta = json.load(f)
    meta["compressor"].update(fields)
    with open(zp, "w") as f:
        json.dump(meta, f, indent=4, sort_keys=True)


# Finding 12: z5 writes a Blosc chunk as the frame followed by
# BLOSC_MAX_OVERHEAD (16) more bytes (dataOut.resize(sizeCompressed +
# BLOSC_MAX_OVERHEAD)); c-blosc reads the frame's own cbytes and ignores
# them. Chunk 0 is random (stored: cbytes = nbytes + 16, the file nbytes +
# 32), chunk 1 compresses.
name = "v2_blosc_z5_trailing"
p = out(name)
data = np.concatenate([rng.integers(-2**31, 2**31 - 1, 48, dtype=np.int64),
                       np.arange(48) * 3]).astype("<i4")
a = zarr.create_array(p, shape=(96,), chunks=(48,), dtype="<i4", zarr_format=2,
                      compressors=numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1),
                      fill_value=0)
a[...] = data
for key in ("0", "1"):
    with open(os.path.join(p, key), "ab") as f:
        f.write(bytes(16))
got = save(name, p)
assert (got == data).all(), "zarr-python does not read the z5-style chunks"

# Finding 13: zarr-python 3 writes numcodecs filters of a v3 array as
# array -> array codecs before "bytes".
name = "v3_numcodecs_delta_i4_i2"
p = out(name)
data = (1000 + np.cumsum(rng.integers(-50, 50, 30))).astype("int32")
a = zarr.create_array(p, shape=(30,), chunks=(10,), dtype="int32", zarr_format=3,
                      filters=[nc.Delta(dtype="<i4", astype="<i2")],
                      compressors=[zarr.codecs.ZstdCodec(level=3)], fill_value=0)
a[...] = data
assert (save(name, p) == data).all()

name = "v3_numcodecs_delta_int64_2d"  # NumPy type names, no astype, numcodecs.zlib
p = out(name)
data = (np.arange(48).reshape(6, 8) * 7 - 100).astype("int64")
a = zarr.create_array(p, shape=(6, 8), chunks=(3, 4), dtype="int64", zarr_format=3,
                      filters=[nc.Delta(dtype="int64")],
                      compressors=[nc.Zlib(level=1)], fill_value=-1)
a[...] = data
assert (save(name, p) == data).all()

name = "v3_numcodecs_delta_f8_f4"  # lossy: what zarr-python reads is expected
p = out(name)
data = np.linspace(0, 1, 20) ** 2
a = zarr.create_array(p, shape=(20,), chunks=(8,), dtype="float64", zarr_format=3,
                      filters=[nc.Delta(dtype="<f8", astype="<f4")],
                      compressors=None, fill_value=0.5)
a[...] = data
save(name, p)

name = "v3_numcodecs_delta_sharded"  # delta before sharding_indexed
p = out(name)
data = (np.arange(64).reshape(8, 8) % 9).astype("uint16")
a = zarr.create_array(p, shape=(8, 8), chunks=(2, 4), shards=(4, 8), dtype="uint16",
                      zarr_format=3, filters=[nc.Delta(dtype="<u2", astype="<i1")],
                      compressors=[zarr.codecs.GzipCodec(level=1)], fill_value=3)
a[:4, :] = data[:4, :]  # the second shard is not written: fill value
assert (save(name, p)[:4] == data[:4]).all()

# Finding 16: levels only matter to encoding. numcodecs writes gzip level -1
# (zlib's default) and zstd level 100 (libzstd clamps it); Blosc clevel 10
# and zlib level 10 are written by hand (numcodecs builds such codecs and
# decodes with them).
for name, comp, edit in [
    ("v2_gzip_level_m1", numcodecs.GZip(level=-1), None),
    ("v2_zstd_level_100", numcodecs.Zstd(level=100), None),
    ("v2_blosc_clevel_10", numcodecs.Blosc(cname="zstd", clevel=5, shuffle=2), {"clevel": 10}),
    ("v2_zlib_level_10", numcodecs.Zlib(level=1), {"level": 10}),
]:
    p = out(name)
    data = (np.arange(60).reshape(6, 10) // 3).astype("<f4")
    a = zarr.create_array(p, shape=(6, 10), chunks=(4, 5), dtype="<f4", zarr_format=2,
                          compressors=comp, fill_value=0)
    a[...] = data
    if edit:
        edit_zarray(p, **edit)
    assert (save(name, p) == data).all()

print("ok", zarr.__version__, numcodecs.__version__)
