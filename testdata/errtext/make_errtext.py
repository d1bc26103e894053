"""Make the fixtures of testdata/errtext (issue 27: error texts that must
not mislead) with zarr-python 3.4, NumPy and Python's json module.

Run from the repository root in the zarr-python chroot:

    ../shared/tools/zarr-python testdata/errtext/make_errtext.py

- v2_nan_fill.zarr: a float64 v2 array whose .zarray holds Python's bare
  NaN as its fill value (json.dumps of the document with a float nan, as
  Python writes it); zarr-python reads it, and so must gozarr.
- v3_inf_fill.zarr: the same for a v3 zarr.json, fill value -Infinity.
- v2_nan_attr.zarr: a v2 array whose .zattrs holds a bare NaN attribute.
- v3_big_vlen.zarr: a valid string array whose one chunk holds 6 MiB of
  values (1024 strings of 6 KiB, zstd: a few KB on disk): over gozarr's
  default limit of a variable-length chunk, not corrupt.
NAME.json beside each readable array holds what zarr-python reads: the
fill value and the values as Zarr spells floats ("NaN", "-Infinity") or, for the
strings, their count, length and first characters.
"""

import json
import math
import os
import shutil

import numpy as np
import zarr

HERE = os.path.dirname(os.path.abspath(__file__))


def fresh(name):
    path = os.path.join(HERE, name)
    shutil.rmtree(path, ignore_errors=True)
    return path


def spell(f):
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "Infinity" if f > 0 else "-Infinity"
    return f


def record(name, a):
    vals = a[...]
    out = {"shape": list(vals.shape), "fill_value": spell(float(a.fill_value)),
           "values": [spell(float(v)) for v in vals.ravel()]}
    with open(os.path.join(HERE, name + ".json"), "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


# v2, bare NaN fill value.
path = fresh("v2_nan_fill.zarr")
a = zarr.create_array(path, shape=(5, 4), chunks=(2, 4), dtype="<f8", zarr_format=2, fill_value=np.nan)
a[0:2] = np.arange(8, dtype="<f8").reshape(2, 4) / 4  # rows 2..4 stay fill
with open(os.path.join(path, ".zarray")) as f:
    meta = json.load(f)
meta["fill_value"] = float("nan")
with open(os.path.join(path, ".zarray"), "w") as f:
    f.write(json.dumps(meta, indent=4, sort_keys=True))  # bare NaN
assert "NaN," in open(os.path.join(path, ".zarray")).read()
record("v2_nan_fill", zarr.open_array(path, mode="r"))

# v3, bare -Infinity fill value.
path = fresh("v3_inf_fill.zarr")
a = zarr.create_array(path, shape=(6,), chunks=(3,), dtype="<f4", fill_value=-np.inf)
a[0:3] = np.array([1.5, -2.0, 3.25], dtype="<f4")
with open(os.path.join(path, "zarr.json")) as f:
    meta = json.load(f)
meta["fill_value"] = float("-inf")
with open(os.path.join(path, "zarr.json"), "w") as f:
    f.write(json.dumps(meta, indent=2))
assert "-Infinity," in open(os.path.join(path, "zarr.json")).read()
record("v3_inf_fill", zarr.open_array(path, mode="r"))

# v2, bare NaN in the attributes: zarr-python reads it as a float nan.
path = fresh("v2_nan_attr.zarr")
a = zarr.create_array(path, shape=(3,), chunks=(3,), dtype="<i2", zarr_format=2, fill_value=0)
with open(os.path.join(path, ".zattrs"), "w") as f:
    f.write(json.dumps({"units": "m", "missing": float("nan")}))
assert math.isnan(zarr.open_array(path, mode="r").attrs["missing"])

# v3, one 6 MiB string chunk.
path = fresh("v3_big_vlen.zarr")
n, size = 1024, 6 << 10
strs = np.array([chr(ord("a") + i % 26) * size for i in range(n)], dtype=object)
a = zarr.create_array(path, shape=(n,), chunks=(n,), dtype=str)
a[...] = strs
got = zarr.open_array(path, mode="r")[...]
with open(os.path.join(HERE, "v3_big_vlen.json"), "w") as f:
    json.dump({"shape": [n], "value_bytes": sum(len(s) for s in got), "first": [s[:3] for s in got[:3]],
               "codecs": [c["name"] for c in json.load(open(os.path.join(path, "zarr.json")))["codecs"]]}, f, indent=1)
    f.write("\n")
