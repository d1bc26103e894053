"""make_states.py OUT -- the plain Zarr v3 hierarchies (written by zarr-python) that
make_repos.mjs commits into Icechunk repositories, one directory per state, plus the values
every array holds in each state as .npy files (OUT/expected/STATE/PATH.npy, PATH with "/" as
"__"). Run by make_fixtures.sh; see README.md there."""
import os, shutil, sys
import numpy as np
import zarr
from zarr.codecs import BytesCodec, ZstdCodec, GzipCodec, TransposeCodec, BloscCodec, Crc32cCodec

out = sys.argv[1]
rng = np.random.default_rng(25)

def arr(root, path, data, chunks, **kw):
    a = root.create_array(path, shape=data.shape, dtype=data.dtype, chunks=chunks, **kw)
    a[...] = data
    return a

def dump(state, root_dir):
    root = zarr.open_group(root_dir, mode="r")
    for path, a in root.members(max_depth=None):
        if isinstance(a, zarr.Array):
            d = os.path.join(out, "expected", state)
            os.makedirs(d, exist_ok=True)
            np.save(os.path.join(d, path.replace("/", "__") + ".npy"), a[...])

def copy(src, dst):
    shutil.copytree(os.path.join(out, "states", src), os.path.join(out, "states", dst))
    return zarr.open_group(os.path.join(out, "states", dst), mode="r+")

shutil.rmtree(out, ignore_errors=True)
s1 = os.path.join(out, "states", "s1")
g = zarr.open_group(s1, mode="w", zarr_format=3)
g.attrs["title"] = "gozarr icechunk fixture"
arr(g, "i4", rng.integers(-1000, 1000, (10, 12), dtype="<i4"), (4, 5),
    compressors=[ZstdCodec(level=3)], fill_value=-1)
arr(g, "f8", rng.standard_normal(20), (6,), compressors=[GzipCodec(level=5)], fill_value=0.5)
arr(g, "small", np.arange(6, dtype="u1"), (3,), compressors=None)
grid = g.create_group("grid", attributes={"kind": "grid"})
arr(grid, "sharded", rng.integers(-30000, 30000, (16, 16), dtype="<i2"), (4, 4), shards=(8, 8),
    compressors=[ZstdCodec(level=1)])
arr(grid, "b", np.array([True, False, True, True, False, False, True]), (4,), compressors=None)
arr(grid, "f4t", rng.standard_normal((5, 4)).astype("<f4"), (2, 4),
    filters=[TransposeCodec(order=(1, 0))], compressors=[BloscCodec(cname="lz4", clevel=5, shuffle="shuffle")])
dump("s1", s1)

# s2: one chunk of i4 rewritten, a chunk of f8 gone (reads the fill value), part of the
# sharded array rewritten, root attributes changed.
g = copy("s1", "s2")
g["i4"][0:4, 0:5] = np.arange(20, dtype="<i4").reshape(4, 5) * 7
os.remove(os.path.join(out, "states", "s2", "f8", "c", "1"))
g["grid/sharded"][8:12, 0:4] = 1234
g.attrs["title"] = "second commit"
dump("s2", os.path.join(out, "states", "s2"))

# s3: an array deleted, one added (big-endian uint64).
g = copy("s2", "s3")
shutil.rmtree(os.path.join(out, "states", "s3", "small"))
arr(g, "u8", (np.arange(9, dtype=">u8").reshape(3, 3) << np.uint64(40)), (2, 2),
    serializer=BytesCodec(endian="big"), compressors=None, fill_value=7)
dump("s3", os.path.join(out, "states", "s3"))

# d1: on branch dev, from s1: another array and a different change to i4.
g = copy("s1", "d1")
g["i4"][8:10, 10:12] = -5
arr(g, "dev_only", np.linspace(0, 1, 9, dtype="<f4"), (4,), compressors=[ZstdCodec(level=1)])
dump("d1", os.path.join(out, "states", "d1"))
print("states written to", out)
