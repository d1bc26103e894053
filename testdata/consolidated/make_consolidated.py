"""Make the consolidated metadata fixtures of testdata/consolidated (issue
14) with zarr-python 3.4.

Run from the repository root in the zarr-python chroot:

    ../shared/tools/zarr-python testdata/consolidated/make_consolidated.py

For each format F (2, 3):
  vF_group.zarr  a group (attributes) with arrays "temp" (float32, units
                 attribute), "time" (datetime64[s]), "names" (<U5) and a
                 subgroup "sub" holding "mask" (bool), consolidated by
                 zarr.consolidate_metadata; the values are in
                 vF_group.zarr.NAME.npy beside it ("sub_mask" for sub/mask).
  vF_stale.zarr  the same, then changed after consolidating: "extra"
                 added, temp's attributes rewritten, "names" deleted.
The script is deterministic: running it again rewrites the same bytes.
"""

import os
import shutil
import warnings

import numpy as np
import zarr

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))


def build(path, fmt):
    shutil.rmtree(path, ignore_errors=True)
    g = zarr.open_group(path, mode="w", zarr_format=fmt, attributes={"title": "fixture"})
    values = {
        "temp": np.arange(12, dtype="float32").reshape(3, 4) / 4,
        "time": np.array([0, 86400, 172800], dtype="int64").view("M8[s]"),
        "names": np.array(["alpha", "b", ""], dtype="<U5"),
    }
    for name, v in values.items():
        a = g.create_array(name, shape=v.shape, dtype=v.dtype, chunks=(2,) * v.ndim,
                           attributes={"units": "K"} if name == "temp" else {})
        a[...] = v
    sub = g.create_group("sub")
    m = sub.create_array("mask", shape=(5,), dtype="bool", chunks=(5,))
    m[...] = np.array([True, False, True, True, False])
    values["sub_mask"] = m[...]
    zarr.consolidate_metadata(path)
    return values


for fmt in (2, 3):
    p = os.path.join(HERE, "v%d_group.zarr" % fmt)
    for name, v in build(p, fmt).items():
        np.save(p + "." + name + ".npy", v)
    s = os.path.join(HERE, "v%d_stale.zarr" % fmt)
    build(s, fmt)
    g = zarr.open_group(s, mode="r+", use_consolidated=False)
    g.create_array("extra", shape=(2,), dtype="int8", chunks=(2,))
    g["temp"].attrs["units"] = "degC"
    del g["names"]
