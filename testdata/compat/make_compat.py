"""Make the v2 compatibility fixtures of testdata/compat (issue 11,
findings 14, 15 and 17) with zarr-python 3 and numcodecs.

Run from the repository root in the zarr-python chroot:

    ../shared/tools/zarr-python testdata/compat/make_compat.py

Every fixture is NAME.zarr (a Zarr v2 array) beside NAME.npy, the values a
reader must return. Arrays are small and leave some chunks unwritten, so
the fill value is read too. Three fixtures are edited by hand after
zarr-python writes them, to hold what older writers left:

  v2_U3_fill_0: "fill_value": 0 on a <U3 array (zarr-python 2 read it as
  "", np.zeros of the dtype; zarr-python 3 refuses it).
  v2_S1_fill_0: "fill_value": 0 on a |S1 array, as zarr-python 2 accepted
  (it handed the number to NumPy, which makes it b"0"); zarr-python 3
  refuses it, so the expected values are NumPy's reading of that fill.

The script is deterministic: running it again rewrites the same bytes.
"""

import json
import os
import shutil

import numcodecs
import numpy as np
import zarr

HERE = os.path.dirname(os.path.abspath(__file__))


def make(name, data, chunks, fill=None, compressors=None, filters=None, written=None):
    """Write data as a v2 array NAME.zarr, storing only data[written] (all
    when None), and NAME.npy with what a reader returns."""
    path = os.path.join(HERE, name + ".zarr")
    shutil.rmtree(path, ignore_errors=True)
    a = zarr.create_array(path, shape=data.shape, chunks=chunks, dtype=data.dtype,
                          zarr_format=2, fill_value=fill, compressors=compressors,
                          filters=filters)
    if written is None:
        a[...] = data
    else:
        a[written] = data[written]
    got = zarr.open_array(path, mode="r")[...]
    np.save(os.path.join(HERE, name + ".npy"), got)
    return path, got


def patch_zarray(path, **fields):
    """Rewrite fields of a .zarray as an older writer left them."""
    p = os.path.join(path, ".zarray")
    with open(p) as f:
        meta = json.load(f)
    meta.update(fields)
    with open(p, "w") as f:
        json.dump(meta, f, indent=4, sort_keys=True)


def main():
    # Finding 14: raw types wider than one byte.
    s5 = np.array([b"ab", b"hello", b"", b"x\x00y", b"zz", b"12345", b"q"], dtype="|S5")
    make("v2_S5", s5, chunks=(3,), written=slice(0, 5))
    v8 = np.frombuffer(bytes(range(48)), dtype="|V8")
    make("v2_V8", v8, chunks=(4,), written=slice(0, 4))

    # Finding 15: "" is the fill of an empty |S7 (zarr-python writes it).
    s7 = np.array([b"abcdefg", b"a", b"", b"xyz", b"", b""], dtype="|S7")
    make("v2_S7_fill_empty", s7, chunks=(2,), fill=b"", written=slice(0, 4))
    # A |S3 fill shorter than the item: zero-padded, as NumPy does.
    s3 = np.array([b"abc", b"de", b"f", b"", b"", b""], dtype="|S3")
    make("v2_S3_fill_short", s3, chunks=(2,), fill=b"z", written=slice(0, 2))

    # ... and |S1 with fill_value 0, as zarr-python 2 read it: b"0".
    s1 = np.array([b"a", b"b", b"c", b"0", b"0"], dtype="|S1")
    path, _ = make("v2_S1_fill_0", s1, chunks=(3,), written=slice(0, 3))
    patch_zarray(path, fill_value=0)
    want = s1.copy()
    want[3:] = np.array(0, dtype="|S1")  # NumPy: b"0"
    np.save(os.path.join(HERE, "v2_S1_fill_0.npy"), want)

    # Issue 26: "fill_value": 0 on a <U3 array, as zarr-python 2 wrote it.
    # zarr-python 2 read a fill of 0 as np.zeros((), dtype)[()], "" for
    # "<U"; zarr-python 3.4 refuses the number. Expected: "" past the
    # written chunks.
    u3 = np.array(["ab", "", "xyz", "", ""], dtype="<U3")
    path, _ = make("v2_U3_fill_0", u3, chunks=(2,), fill="", written=slice(0, 3))
    patch_zarray(path, fill_value=0)
    np.save(os.path.join(HERE, "v2_U3_fill_0.npy"), u3)

    # Finding 17: the crc32c checksum, as compressor (default location,
    # end; and start) and as a filter before a compressor.
    i2 = np.arange(-7, 13, dtype="<i2").reshape(4, 5)
    make("v2_crc32c", i2, chunks=(2, 3), fill=0, compressors=numcodecs.CRC32C(),
         written=(slice(0, 2), slice(None)))
    make("v2_crc32c_start", i2, chunks=(2, 3), fill=0,
         compressors=numcodecs.CRC32C(location="start"), written=(slice(0, 2), slice(None)))
    make("v2_crc32c_end_filter", i2.astype(">i4"), chunks=(3, 2), fill=-1,
         filters=[numcodecs.CRC32C(location="end")], compressors=numcodecs.Zlib(level=1),
         written=(slice(0, 3), slice(None)))


if __name__ == "__main__":
    main()
