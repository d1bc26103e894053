"""Read arrays written by gozarr with zarr-python 3 and compare them with
the expected .npy files beside them (written by `GOZARR_WRITE_DIR=DIR go
test ./zarr -run TestWriteForPeers`). Any NaN matches any NaN; everything
else must match bit for bit. Prints one line per array and a summary, and
exits non-zero on any mismatch.

    zarr-python testdata/interop/check_zarr_python.py DIR
"""
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


def main(root):
    root = pathlib.Path(root)
    passed = failed = 0
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
