"""Make the extension data type fixtures of testdata/extdtypes (issue 14)
with zarr-python 3.4 and NumPy.

Run from the repository root in the zarr-python chroot:

    ../shared/tools/zarr-python testdata/extdtypes/make_extdtypes.py

Every fixture is NAME.zarr (Zarr v2 or v3, as the name says) beside
NAME.npy, the values zarr-python reads back, and NAME.txt, what
`zarrcat get` prints (NumPy's str of each element, strings quoted the Go
way). Arrays leave a chunk unwritten, so the fill value is read too.
The script is deterministic: running it again rewrites the same bytes.
"""

import json
import os
import shutil
import warnings

import numpy as np
import zarr

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))

UNITS = ["Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as", "10s"]


def make(name, data, chunks, fmt, fill=None, compressors="auto", written=None):
    path = os.path.join(HERE, name + ".zarr")
    shutil.rmtree(path, ignore_errors=True)
    a = zarr.create_array(path, shape=data.shape, chunks=chunks, dtype=data.dtype,
                          zarr_format=fmt, fill_value=fill, compressors=compressors)
    if written is None:
        a[...] = data
    else:
        a[written] = data[written]
    got = zarr.open_array(path, mode="r")[...]
    np.save(os.path.join(HERE, name + ".npy"), got)
    with open(os.path.join(HERE, name + ".txt"), "w", encoding="utf-8") as f:
        for x in got.ravel():
            f.write(text(x) + "\n")


def text(x):
    """What zarrcat prints for element x."""
    if isinstance(x, np.str_):
        return json.dumps(str(x), ensure_ascii=False)
    if isinstance(x, np.bytes_):
        return 'b"' + "".join(chr(c) if 32 <= c < 127 and chr(c) not in '"\\' else "\\x%02x" % c
                              for c in bytes(x)) + '"'
    if isinstance(x, np.timedelta64):
        if np.isnat(x):
            return "NaT"
        unit, scale = np.datetime_data(x.dtype)
        return "%d %s" % (int(x.astype("int64")) * scale, unit)
    return str(x)


manifest = []
for fmt in (2, 3):
    v = "v%d" % fmt
    s = np.array([["ab", "", "é€x"], ["xyz", "q", "日本"]], dtype="<U3")
    make(v + "_U3", s, (1, 2), fmt, fill="zz", written=(slice(0, 1), slice(None)))
    make(v + "_U2_bigendian", np.array(["ab", "c", "", "de"], dtype=">U2"), (2,), fmt)
    make(v + "_S4", np.array([b"ab", b"", b"wxyz", b"\x01\x02"], dtype="|S4"), (3,), fmt,
         fill=b"no", written=slice(0, 3))
    for u in UNITS:
        vals = np.array([0, 1, -1, 12345, 0], dtype="int64").view("<M8[%s]" % u)
        vals[4] = np.datetime64("NaT")
        # File names differ in more than case (M8_M months, M8_min minutes;
        # timedelta_ for m8): the go command refuses a module whose files
        # collide on a case-insensitive file system (go get, go install @latest).
        make("%s_M8_%s" % (v, "min" if u == "m" else u), vals, (2,), fmt, fill=np.datetime64("NaT"),
             written=slice(0, 4))
    for u in ["D", "s", "ns", "us"]:
        vals = np.array([5, -7, 0], dtype="int64").view("<m8[%s]" % u)
        make("%s_timedelta_%s" % (v, u), vals, (2,), fmt, fill=np.timedelta64("NaT"), written=slice(0, 2))
    make(v + "_M8_ns_bigendian", np.array([1, 2, 3], dtype=">M8[ns]"), (2,), fmt)
