#!/usr/bin/env python3
"""Reads Parquet references gozarr wrote (store/kerchunk/parquet Write) with
fsspec's ReferenceFileSystem (kerchunk's LazyReferenceMapper layout) and
compares every chunk it returns with the chunk's bytes at the address h5py
reports. Prints "N/N chunks equal" (and the mismatches).

    ../shared/tools/zarr-python testdata/virtual/read_parquet.py DIR.parq FILE.h5
"""
import sys

import cramjam

for m in ["gzip", "deflate"]:  # Debian's cramjam lacks them; fastparquet imports them
    if not hasattr(cramjam, m):
        setattr(cramjam, m, cramjam.zstd)
import fsspec
import h5py

parq, h5 = sys.argv[1], sys.argv[2]
fs = fsspec.filesystem("reference", fo=parq, remote_protocol="file")
total = good = 0
with h5py.File(h5, "r") as f, open(h5, "rb") as raw:
    def visit(name, obj):
        global total, good
        if not isinstance(obj, h5py.Dataset) or obj.chunks is None:
            return
        try:
            fs.cat(name + "/.zarray")
        except Exception:
            return  # not referenced (unsupported)
        for i in range(obj.id.get_num_chunks()):
            info = obj.id.get_chunk_info(i)
            key = name + "/" + ".".join(str(o // c) for o, c in zip(info.chunk_offset, obj.chunks))
            raw.seek(info.byte_offset)
            want = raw.read(info.size)
            total += 1
            got = fs.cat(key)
            if got == want:
                good += 1
            else:
                print("MISMATCH", key, len(got), len(want))
    f.visititems(visit)
print(f"{good}/{total} chunks equal")
