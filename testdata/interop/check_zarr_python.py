"""Read arrays written by gozarr with zarr-python 3 and compare them with
the expected .npy files beside them (written by `GOZARR_WRITE_DIR=DIR go
test ./zarr -run TestWriteForPeers`). Any NaN matches any NaN; everything
else must match bit for bit. Variable-length string and bytes arrays come
with NAME.vlen.json instead ({"shape", "dtype": "string"|"bytes",
"values": strings, or base64 of bytes, in C order}), written by
TestWriteVLenForPeers; their values must be equal. Prints one line per array and a summary, and
exits non-zero on any mismatch.

    zarr-python testdata/interop/check_zarr_python.py DIR
"""
import base64
import json
import pathlib
import sys

import numpy as np
import zarr


def same(got, want):
    if got.shape != want.shape or got.dtype.newbyteorder("=") != want.dtype.newbyteorder("="):
        return False
    g = np.atleast_1d(np.ascontiguousarray(got).astype(want.dtype, copy=False))
    w = np.atleast_1d(want)
    if w.dtype.kind in "fc":
        both_nan = np.isnan(g) & np.isnan(w)
        bits = lambda a: a.view(np.uint8).reshape(a.shape + (-1,))
        return bool(np.all(both_nan | (bits(g) == bits(w)).all(axis=-1)))
    return g.tobytes() == w.tobytes()


def same_vlen(got, want):
    """Compare an object array of str or bytes with a NAME.vlen.json."""
    if list(got.shape) != want["shape"]:
        return False
    vals = want["values"]
    if want["dtype"] == "bytes":
        vals = [base64.b64decode(v) for v in vals]
    flat = got.ravel().tolist()
    return len(flat) == len(vals) and all(type(g) is type(w) and g == w for g, w in zip(flat, vals))


def main(root):
    root = pathlib.Path(root)
    passed = failed = 0
    for js in sorted(root.glob("*.vlen.json")):
        stem = js.name[: -len(".vlen.json")]
        try:
            got = np.asarray(zarr.open_array(str(root / (stem + ".zarr")), mode="r")[...], dtype=object)
            ok = same_vlen(got, json.loads(js.read_text(encoding="utf-8")))
        except Exception as e:  # report and go on
            print(f"FAIL {stem}: {type(e).__name__}: {e}")
            failed += 1
            continue
        print(("ok   " if ok else "FAIL ") + stem)
        passed += ok
        failed += not ok
    for npy in sorted(root.glob("*.npy")):
        path = npy.with_suffix(".zarr")
        want = np.load(npy)
        try:
            got = zarr.open_array(str(path), mode="r")[...]
            ok = same(np.asarray(got), want)
        except Exception as e:  # report and go on
            print(f"FAIL {npy.stem}: {type(e).__name__}: {e}")
            failed += 1
            continue
        print(("ok   " if ok else "FAIL ") + npy.stem)
        passed += ok
        failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
