"""Read every reference case out of a zip archive with zarr-python's
ZipStore and compare it with the expected .npy of the corpus. Any NaN
matches any NaN; everything else must match bit for bit. Prints one FAIL
line per mismatch and a summary; exits non-zero on any mismatch.

    zarr-python store/zip/testdata/check_zipstore.py ARCHIVE testdata/refdata
"""
import json
import os
import sys

import numpy as np
import zarr
from zarr.storage import ZipStore

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "..", "testdata", "interop"))
from check_zarr_python import same  # noqa: E402  (any NaN matches any NaN)


def main(archive, root):
    with open(os.path.join(root, "manifest.json")) as f:
        m = json.load(f)
    st = ZipStore(archive, mode="r")
    passed = failed = 0
    for c in m["cases"]:
        want = np.load(os.path.join(root, c["expected"]))
        try:
            a = zarr.open_array(st, path=c["path"].strip("/"), mode="r", zarr_format=c["zarr_format"])
            ok = same(np.asarray(a[...]), want)
        except Exception as e:  # report and go on
            print(f"FAIL {c['name']}: {type(e).__name__}: {e}")
            failed += 1
            continue
        if ok:
            passed += 1
        else:
            print(f"FAIL {c['name']}: values differ")
            failed += 1
    for g in m["groups"]:
        try:
            grp = zarr.open_group(st, path=g["path"].strip("/"), mode="r", zarr_format=g["zarr_format"])
            names = sorted(k for k, _ in grp.members(max_depth=None))
            want = sorted(n["path"] for n in g["nodes"] if n["path"])
            if names != want:
                raise ValueError(f"members {names}, want {want}")
            passed += 1
        except Exception as e:
            print(f"FAIL group {g['name']}: {type(e).__name__}: {e}")
            failed += 1
    st.close()
    print(f"zarr-python {zarr.__version__} ZipStore: {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
