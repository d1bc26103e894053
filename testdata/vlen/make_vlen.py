"""Make the variable-length string and bytes fixtures of testdata/vlen
(issue 14) with zarr-python 3.4 and NumPy.

Run from the repository root in the zarr-python chroot:

    ../shared/tools/zarr-python testdata/vlen/make_vlen.py

Every fixture is NAME.zarr (Zarr v2 or v3, as the name says) beside
NAME.json, the values zarr-python reads back ({"shape", "dtype",
"values"}: strings, or base64 for bytes, in C order), and NAME.npy, the
same values as NumPy fixed-width "<U" (or "|S") — what `zarrcat get
--format npy` writes. Arrays leave chunks (and shards, inner chunks)
unwritten, so the fill value is read too. The script is deterministic:
running it again rewrites the same bytes.
"""

import base64
import json
import os
import shutil
import warnings

import numpy as np
import zarr
from zarr.core.dtype import VariableLengthBytes, VariableLengthUTF8

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))

WORDS = ["", "a", "héllo", "日本語", "emoji 🎉", "tab\tand \"quotes\"", "x" * 70, "Ωmega", "back\\slash", "end"]


def strings(n, seed):
    return np.array([WORDS[(seed + 7 * i) % len(WORDS)] + ("" if i % 3 else str(i)) for i in range(n)], dtype=object)


def blobs(n, seed):
    return np.array([bytes([(seed + i * j) % 256 for j in range(i % 6)]) + b"z" * (i % 2) for i in range(n)], dtype=object)


def make(name, data, chunks, fmt, kind, fill=None, shards=None, written=None, compressors="auto", order=None):
    path = os.path.join(HERE, name + ".zarr")
    shutil.rmtree(path, ignore_errors=True)
    dt = VariableLengthUTF8() if kind == "string" else VariableLengthBytes()
    kw = {}
    if order is not None:
        kw["order"] = order
    a = zarr.create_array(path, shape=data.shape, chunks=chunks, shards=shards, dtype=dt,
                          zarr_format=fmt, fill_value=fill, compressors=compressors, **kw)
    if written is None:
        a[...] = data
    else:
        for w in written:
            a[w] = data[w]
    got = np.asarray(zarr.open_array(path, mode="r")[...], dtype=object)
    vals = [str(x) if kind == "string" else base64.b64encode(bytes(x)).decode() for x in got.ravel()]
    with open(os.path.join(HERE, name + ".json"), "w", encoding="utf-8") as f:
        json.dump({"shape": list(got.shape), "dtype": kind, "values": vals}, f, ensure_ascii=False, indent=1)
        f.write("\n")
    fixed = np.array(got.tolist(), dtype=str if kind == "string" else bytes).reshape(got.shape)
    np.save(os.path.join(HERE, name + ".npy"), fixed)


for fmt in (2, 3):
    v = "v%d" % fmt
    s2d = strings(35, 1).reshape(5, 7)
    make(v + "_string", s2d, (2, 3), fmt, "string",
         written=[(slice(0, 2), slice(None)), (slice(4, 5), slice(0, 3))])
    make(v + "_string_fill", strings(9, 2), (4,), fmt, "string", fill="N/A", written=[slice(0, 3)])
    make(v + "_string_raw", strings(6, 3), (4,), fmt, "string", compressors=None)
    make(v + "_bytes", blobs(11, 5).reshape(11), (3,), fmt, "bytes", written=[slice(0, 6), slice(9, 11)])
    make(v + "_bytes_fill", blobs(5, 9), (2,), fmt, "bytes", fill=b"\x01fill", written=[slice(0, 2)])
    make(v + "_string_0d", np.array("scalar ✓", dtype=object), (), fmt, "string")
make("v2_string_F", strings(24, 4).reshape(4, 6), (3, 4), 2, "string", order="F",
     written=[(slice(0, 3), slice(None))])
make("v3_string_sharded", strings(40, 6).reshape(8, 5), (2, 2), 3, "string", shards=(4, 4),
     written=[(slice(0, 2), slice(0, 4)), (slice(4, 7), slice(None))])
make("v3_bytes_sharded", blobs(16, 7), (2,), 3, "bytes", shards=(8,), written=[slice(0, 6)])


def dataset(fmt):
    """An xarray-like dataset (xarray is not in the chroot): a consolidated
    group with a string coordinate "station" (dimension names in
    _ARRAY_DIMENSIONS for v2, dimension_names for v3), an int64 "time" with
    CF units and a float32 "temp" over both."""
    path = os.path.join(HERE, "dataset_v%d.zarr" % fmt)
    shutil.rmtree(path, ignore_errors=True)
    g = zarr.open_group(path, mode="w", zarr_format=fmt, attributes={"title": "stations"})
    dims = lambda *d: {"attributes": {"_ARRAY_DIMENSIONS": list(d)}} if fmt == 2 else {"dimension_names": list(d)}
    st = g.create_array("station", shape=(4,), chunks=(4,), dtype=VariableLengthUTF8(), **dims("station"))
    st[...] = np.array(["Zürich", "Genève", "", "北京"], dtype=object)
    t = g.create_array("time", shape=(3,), chunks=(3,), dtype="int64", **dims("time"))
    t.attrs["units"] = "days since 2000-01-01"
    t[...] = np.array([0, 1, 2])
    tp = g.create_array("temp", shape=(3, 4), chunks=(2, 2), dtype="float32", **dims("time", "station"))
    tp[...] = np.arange(12, dtype="float32").reshape(3, 4)
    zarr.consolidate_metadata(path)


dataset(2)
dataset(3)
