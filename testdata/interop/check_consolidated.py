"""Open the consolidated groups gozarr wrote (cons_v2.group, cons_v3.group,
from `GOZARR_WRITE_DIR=DIR go test ./zarr -run TestWriteV2ForPeers`) with
zarr-python 3's open_consolidated, and check that it finds every node in
the consolidated metadata and reads the arrays. Exits non-zero on any
failure.

    zarr-python testdata/interop/check_consolidated.py DIR
"""
import pathlib
import sys
import warnings

import numpy as np
import zarr

warnings.filterwarnings("ignore")


def main(root):
    failed = 0
    for fmt in (2, 3):
        path = pathlib.Path(root) / ("cons_v%d.group" % fmt)
        try:
            g = zarr.open_consolidated(str(path), zarr_format=fmt)
            meta = g.metadata.consolidated_metadata
            names = sorted(meta.flattened_metadata) if meta is not None else []
            ok = names == ["a", "sub", "sub/b"]
            ok &= g.attrs["title"] == "gozarr"
            for p in ("a", "sub/b"):
                ok &= np.array_equal(g[p][...], np.array([1, 2, 3, 4], dtype="<i4"))
        except Exception as e:
            print("FAIL %s: %s: %s" % (path.name, type(e).__name__, e))
            failed += 1
            continue
        print(("ok   " if ok else "FAIL ") + path.name + " " + ",".join(names))
        failed += not ok
    print("%d failed" % failed)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
