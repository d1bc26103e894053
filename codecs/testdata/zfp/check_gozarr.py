"""Checks the Zarr arrays gozarr wrote with numcodecs.zfpy (codecs/zfp's
TestZarrPythonReadsGozarr): zarr-python 3 must read each NAME.zarr as
NAME.dec.npy (gozarr's own reading, bit for bit), and writing
NAME.orig.npy into a copy of its metadata with zarr-python and numcodecs'
zfpy must give the very chunk files gozarr wrote.

    /work/shared/tools/zarr-python check_gozarr.py DIR
"""
import os
import shutil
import sys
import warnings

import numpy as np
import zarr

warnings.simplefilter("ignore")


def files(root):
    out = {}
    for d, _, fs in os.walk(root):
        for f in fs:
            if f in ("zarr.json", ".zarray", ".zattrs", ".zgroup"):
                continue
            p = os.path.join(d, f)
            out[os.path.relpath(p, root)] = open(p, "rb").read()
    return out


def main(top):
    names = sorted(n[:-5] for n in os.listdir(top) if n.endswith(".zarr"))
    assert names, "no arrays in " + top
    for name in names:
        path = os.path.join(top, name + ".zarr")
        got = zarr.open_array(path, mode="r")[:]
        dec = np.load(os.path.join(top, name + ".dec.npy"))
        assert got.dtype == dec.dtype and got.shape == dec.shape, (name, got.dtype, got.shape)
        assert got.tobytes() == dec.tobytes(), name + ": zarr-python reads other values than gozarr"
        copy = os.path.join(top, name + ".py")
        shutil.rmtree(copy, ignore_errors=True)
        os.makedirs(copy)
        for meta in ("zarr.json", ".zarray"):
            if os.path.exists(os.path.join(path, meta)):
                shutil.copy(os.path.join(path, meta), copy)
        b = zarr.open_array(copy, mode="r+")
        b[:] = np.load(os.path.join(top, name + ".orig.npy"))
        mine, theirs = files(path), files(copy)
        assert mine.keys() == theirs.keys(), (name, sorted(mine), sorted(theirs))
        for k in mine:
            assert mine[k] == theirs[k], "%s: chunk %s: gozarr wrote %d bytes, zarr-python %d" % (
                name, k, len(mine[k]), len(theirs[k]))
        print(name, "ok:", len(mine), "chunk files equal")


main(sys.argv[1])
