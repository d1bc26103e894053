#!/usr/bin/env python3
"""Writes the HDF5 / NetCDF-4 reference files of package hdf5 and what h5py
says about them (expected.json: per dataset dtype, shape, layout, filters and
every chunk's address from dataset.id.get_chunk_info; values/*.npy: the
values h5py reads).

Run from the repository root in the reference chroot:
    ../shared/tools/zarr-python hdf5/testdata/gen.py
(or `gen.py szip_raw` for szip_raw.h5 and its entry alone).
It rewrites hdf5/testdata/{*.h5,*.nc,expected.json,values/}. Files stay small
(KBs); the big benchmark file is made by the benchmark itself (gen.py big N).
"""
import json
import os
import sys

import h5py
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def compact(f, name, data):
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.COMPACT)
    sid = h5py.h5s.create_simple(data.shape)
    tid = h5py.h5t.py_create(data.dtype)
    dsid = h5py.h5d.create(f.id, name.encode(), tid, sid, dcpl=dcpl)
    dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(data))


def small_files():
    rng = np.random.default_rng(28)
    a2 = np.arange(20 * 30, dtype="<i4").reshape(20, 30)
    f2 = rng.standard_normal((13, 17)).astype(">f8")

    # v0 superblock, object header v1, symbol-table groups, B-tree v1 chunk index.
    with h5py.File(os.path.join(HERE, "earliest.h5"), "w", libver="earliest") as f:
        f.attrs["title"] = "earliest layouts"
        f.attrs["answer"] = np.int64(42)
        f.attrs["fixed"] = np.bytes_(b"fixed string")
        f.attrs["vec"] = np.array([1.5, 2.5, -3.0], dtype="<f4")
        f.create_dataset("chunked_gzip_shuffle", data=a2, chunks=(7, 8),
                         compression="gzip", compression_opts=4, shuffle=True)
        f.create_dataset("contiguous_be_f8", data=f2)
        compact(f, "compact_i2", np.arange(12, dtype="<i2").reshape(3, 4))
        f.create_dataset("fletcher", data=a2.astype("<u2"), chunks=(10, 10), fletcher32=True)
        f.create_dataset("lzf", data=a2.astype("<f4"), chunks=(6, 30), compression="lzf")
        d = f.create_dataset("sparse", shape=(40, 40), dtype="<i8", chunks=(10, 10), fillvalue=-7)
        d[0:10, 10:20] = 5
        d[35, 35] = 9
        f.create_dataset("unlimited", data=a2[:5], maxshape=(None, 30), chunks=(2, 16))
        f.create_dataset("strings", data=np.array([b"alpha", b"be", b"gamma!"], dtype="S6"))
        f.create_dataset("scalar", data=np.float32(3.25))
        g = f.create_group("sub/deeper")
        g.attrs["note"] = "nested"
        g.create_dataset("u1", data=np.arange(256, dtype="u1").reshape(16, 16), chunks=(16, 4))
        many = f.create_group("many")
        for i in range(40):  # more than a symbol-table node's 8 entries
            many.create_dataset(f"d{i:02d}", data=np.arange(i + 1, dtype="<i4"))

    # v3 superblock, object header v2, link messages, every v4 chunk index.
    with h5py.File(os.path.join(HERE, "latest.h5"), "w", libver="latest") as f:
        f.attrs["title"] = "latest layouts"
        f.create_dataset("single_chunk", data=a2, chunks=(20, 30))
        f.create_dataset("single_chunk_gzip", data=a2, chunks=(20, 30), compression="gzip")
        f.create_dataset("fixed_array", data=a2, chunks=(7, 8))
        f.create_dataset("fixed_array_gzip", data=a2, chunks=(7, 8), compression="gzip", shuffle=True)
        f.create_dataset("fixed_array_paged", data=np.arange(1100, dtype="i1"), chunks=(1,))
        f.create_dataset("fixed_array_paged_gzip", data=np.arange(1100, dtype="<i2"), chunks=(1,),
                         compression="gzip")
        d = f.create_dataset("fixed_maxshape", shape=(20, 10), maxshape=(40, 30), dtype="<i4", chunks=(3, 4))
        d[...] = a2[:20, :10]
        f.create_dataset("earray_dim0", data=a2, maxshape=(None, 30), chunks=(3, 8))
        f.create_dataset("earray_dim1", data=a2, maxshape=(20, None), chunks=(3, 8))
        f.create_dataset("earray_long", data=np.arange(400, dtype="<f8"), maxshape=(None,), chunks=(1,))
        f.create_dataset("earray_long_gzip", data=np.arange(300, dtype="<i4"), maxshape=(None,), chunks=(1,),
                         compression="gzip")
        f.create_dataset("btree2", data=a2, maxshape=(None, None), chunks=(3, 8))
        f.create_dataset("btree2_gzip", data=a2, maxshape=(None, None), chunks=(3, 8), compression="gzip",
                         fletcher32=True)
        f.create_dataset("btree2_deep", data=np.arange(40 * 40, dtype="i1").reshape(40, 40),
                         maxshape=(None, None), chunks=(1, 1))
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((7, 8))
        dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
        sid = h5py.h5s.create_simple((20, 30))
        dsid = h5py.h5d.create(f.id, b"implicit", h5py.h5t.STD_I32LE, sid, dcpl=dcpl)
        dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(a2))
        f.create_dataset("contiguous", data=f2)
        compact(f, "compact", np.arange(6, dtype=">u4"))
        d = f.create_dataset("sparse_fixed", shape=(40, 40), dtype="<f4", chunks=(10, 10), fillvalue=np.nan)
        d[12, 13] = 1.5
        g = f.create_group("dense")  # more links and attributes than fit compactly
        for i in range(20):
            g.create_dataset(f"v{i:02d}", data=np.full((3,), i, dtype="<i2"))
            g.attrs[f"a{i:02d}"] = np.int32(i * 10)
        g.attrs["text"] = "a variable-length string"
        d = f["fixed_array"]
        for i in range(12):
            d.attrs[f"attr{i:02d}"] = float(i) / 4

    # Filters of archives (szip from libaec, the hdf5plugin filters), chunks
    # whose filters were skipped (filter masks), and types references
    # cannot describe.
    import hdf5plugin
    with h5py.File(os.path.join(HERE, "filters.h5"), "w", libver="latest") as f:
        f.create_dataset("szip", data=a2, chunks=(10, 15), compression="szip", compression_opts=("nn", 8))
        # szip over every pixel size (32/64-bit pixels are byte-transposed),
        # both byte orders, entropy coding alone, scanlines padded to blocks.
        wave = np.sin(np.arange(40 * 36) / 9.0).reshape(40, 36) * 1000
        szips = {
            "szip_u1_ec": (rng.integers(0, 4, (40, 36)).astype("u1"), ("ec", 16)),
            "szip_i2_be": (wave.astype(">i2"), ("nn", 32)),
            "szip_u2": (np.abs(wave).astype("<u2"), ("nn", 16)),
            "szip_f4": (wave.astype("<f4"), ("nn", 8)),
            "szip_f8_be": (wave.astype(">f8"), ("nn", 32)),
            "szip_i8": (wave.astype("<i8"), ("ec", 8)),
        }
        for name, (data, opts) in szips.items():
            f.create_dataset(name, data=data, chunks=(16, 18), compression="szip", compression_opts=opts)
        plugins = {
            "lz4": (a2, hdf5plugin.LZ4()),
            "bitshuffle_lz4": (a2, hdf5plugin.Bitshuffle(cname="lz4")),
            "bitshuffle": (a2, hdf5plugin.Bitshuffle(cname="none")),
            "zstd": (a2, hdf5plugin.Zstd(clevel=3)),
            "blosc_lz4": (a2.astype("<f8"), hdf5plugin.Blosc(cname="lz4", clevel=5, shuffle=hdf5plugin.Blosc.SHUFFLE)),
        }
        for name, (data, plugin) in plugins.items():
            try:
                f.create_dataset(name, data=data, chunks=(10, 15), **plugin)
            except ValueError as e:  # a plugin this hdf5plugin build lacks
                print("skipped", name, e)
        f.create_dataset("be_i4", data=a2.astype(">i4"), chunks=(10, 15), compression="gzip", shuffle=True)
        # Every chunk written raw past the gzip filter: the same mask for all.
        d = f.create_dataset("masked_uniform", shape=(20, 30), dtype="<i4", chunks=(10, 15), compression="gzip")
        for i in range(2):
            for j in range(2):
                block = np.ascontiguousarray(a2[i * 10:(i + 1) * 10, j * 15:(j + 1) * 15])
                d.id.write_direct_chunk((i * 10, j * 15), block.tobytes(), filter_mask=1)
        # One chunk raw, the others compressed: masks that differ.
        d = f.create_dataset("masked_mixed", data=a2, chunks=(10, 15), compression="gzip")
        d.id.write_direct_chunk((0, 0), np.ascontiguousarray(a2[:10, :15]).tobytes(), filter_mask=1)
        f.create_dataset("compound", data=np.array([(1, 2.5), (3, 4.5)], dtype=[("i", "<i4"), ("x", "<f8")]))
        f.create_dataset("vlen_str", data=np.array(["a", "bc"], dtype=h5py.string_dtype()))

    # Tiny files: the seeds of the fuzz targets.
    for libver in ("earliest", "latest"):
        with h5py.File(os.path.join(HERE, f"tiny_{libver}.h5"), "w", libver=libver) as f:
            f.attrs["a"] = np.int16(7)
            f.create_dataset("c", data=np.arange(12, dtype="<i2").reshape(3, 4), chunks=(2, 2),
                             compression="gzip", shuffle=True)
            f.create_dataset("u", data=np.arange(6, dtype="<f4"), maxshape=(None,), chunks=(4,))
            f.create_dataset("s", data=np.float64(1))

    # NetCDF-4 (HDF5 with dimension scales), written by the netCDF4 library.
    import netCDF4
    with netCDF4.Dataset(os.path.join(HERE, "cf.nc"), "w", format="NETCDF4") as nc:
        nc.title = "a CF-style file"
        nc.Conventions = "CF-1.8"
        nc.createDimension("time", None)
        nc.createDimension("lat", 6)
        nc.createDimension("lon", 8)
        nc.createDimension("nv", 2)  # a dimension without a variable
        t = nc.createVariable("time", "f8", ("time",))
        t.units = "days since 2000-01-01"
        t.standard_name = "time"
        t[:] = np.arange(5) * 0.5
        la = nc.createVariable("lat", "f4", ("lat",))
        la.units = "degrees_north"
        la[:] = np.linspace(-50, 50, 6)
        lo = nc.createVariable("lon", "f4", ("lon",))
        lo.units = "degrees_east"
        lo[:] = np.linspace(0, 315, 8)
        v = nc.createVariable("temp", "f4", ("time", "lat", "lon"), zlib=True, shuffle=True,
                              complevel=3, chunksizes=(2, 3, 4), fill_value=np.float32(-999))
        v.units = "K"
        v.long_name = "air temperature"
        v.scale_factor = np.float32(0.5)
        v[:] = (np.arange(5 * 6 * 8).reshape(5, 6, 8) % 97).astype("f4")
        b = nc.createVariable("bounds", "i2", ("lat", "nv"))
        b[:] = np.arange(12).reshape(6, 2)
        grp = nc.createGroup("surface")
        p = grp.createVariable("pressure", "i4", ("lat", "lon"), fill_value=np.int32(-1))
        p[:] = np.arange(48).reshape(6, 8)
        p.units = "Pa"


def szip_raw(path):
    """szip skipped for some chunks (random 32-bit data it cannot shrink is
    stored raw, filter mask 1), some raw chunks starting with the 4 bytes of
    an szip size header (the chunk's byte count, 512), with and without a
    fletcher32 filter after szip."""
    rng = np.random.default_rng(2828)
    a = rng.integers(-2**31, 2**31 - 1, (32, 16), dtype="<i4")
    a[16:24] = np.arange(8 * 16).reshape(8, 16)  # chunk 2: coded
    a[24:32] = 0                                 # chunk 3: coded
    a[0, 0] = 8 * 16 * 4                         # chunk 0: raw, ambiguous
    clear = a.copy()
    clear[0, 0] = 7                              # no ambiguous chunk
    with h5py.File(path, "w") as f:
        f.create_dataset("szip_raw_i4", data=a, chunks=(8, 16), compression="szip", compression_opts=("nn", 8))
        f.create_dataset("szip_fletcher", data=clear, chunks=(8, 16), compression="szip",
                         compression_opts=("ec", 16), fletcher32=True)
        f.create_dataset("ambiguous_fletcher", data=a, chunks=(8, 16), compression="szip",
                         compression_opts=("ec", 16), fletcher32=True)


def describe(path):
    out = {}

    def visit(name, obj):
        if not isinstance(obj, h5py.Dataset):
            return
        dsid = obj.id
        plist = dsid.get_create_plist()
        layout = {h5py.h5d.COMPACT: "compact", h5py.h5d.CONTIGUOUS: "contiguous",
                  h5py.h5d.CHUNKED: "chunked"}[plist.get_layout()]
        filters = []
        for i in range(plist.get_nfilters()):
            code, flags, values, fname = plist.get_filter(i)
            filters.append({"id": int(code), "flags": int(flags), "values": [int(v) for v in values]})
        info = {
            "dtype": obj.dtype.str,
            "shape": list(obj.shape),
            "maxshape": [-1 if m is None else m for m in obj.maxshape] if obj.maxshape is not None else None,
            "chunks": list(obj.chunks) if obj.chunks else None,
            "layout": layout,
            "filters": filters,
            "fillvalue": obj.fillvalue.item() if hasattr(obj.fillvalue, "item") else obj.fillvalue,
        }
        if isinstance(info["fillvalue"], bytes):
            info["fillvalue"] = info["fillvalue"].decode("latin-1")
        if isinstance(info["fillvalue"], float) and np.isnan(info["fillvalue"]):
            info["fillvalue"] = "NaN"
        if layout == "chunked":
            chunks = []
            for i in range(dsid.get_num_chunks()):
                ci = dsid.get_chunk_info(i)
                chunks.append([list(ci.chunk_offset), int(ci.filter_mask), int(ci.byte_offset), int(ci.size)])
            info["chunk_info"] = chunks
        elif layout == "contiguous":
            info["offset"] = dsid.get_offset()
            info["size"] = dsid.get_storage_size()
        dims = []
        for n in range(obj.ndim):
            scales = [obj.dims[n][i].name for i in range(len(obj.dims[n]))]
            dims.append(scales)
        info["dims"] = dims
        info["is_scale"] = bool(h5py.h5ds.is_scale(dsid))
        vname = os.path.basename(path) + "__" + name.replace("/", "__") + ".npy"
        np.save(os.path.join(HERE, "values", vname), obj[()])
        info["values"] = vname
        out["/" + name] = info

    with h5py.File(path, "r") as f:
        f.visititems(visit)
        sb = f.id.get_create_plist().get_version()
    return {"superblock": sb[0], "datasets": out}


def big(n, path):
    """A file with n chunks (fixed array, then B-tree v1) for the benchmark."""
    side = int(np.ceil(np.sqrt(n)))
    for libver, name in (("latest", path + ".latest.h5"), ("earliest", path + ".earliest.h5")):
        with h5py.File(name, "w", libver=libver) as f:
            d = f.create_dataset("x", shape=(side, side), dtype="u1", chunks=(1, 1))
            d[...] = (np.arange(side * side) % 251).astype("u1").reshape(side, side)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "big":
        big(int(sys.argv[2]), sys.argv[3])
        return
    if len(sys.argv) > 1 and sys.argv[1] == "szip_raw":
        # Only szip_raw.h5 and its entry of expected.json (the other files
        # stay byte for byte as they are).
        szip_raw(os.path.join(HERE, "szip_raw.h5"))
        with open(os.path.join(HERE, "expected.json")) as fh:
            expected = json.load(fh)
        expected["szip_raw.h5"] = describe(os.path.join(HERE, "szip_raw.h5"))
        with open(os.path.join(HERE, "expected.json"), "w") as fh:
            json.dump(expected, fh, separators=(",", ":"), sort_keys=True)
        return
    os.makedirs(os.path.join(HERE, "values"), exist_ok=True)
    for fn in os.listdir(os.path.join(HERE, "values")):
        os.remove(os.path.join(HERE, "values", fn))
    small_files()
    szip_raw(os.path.join(HERE, "szip_raw.h5"))
    expected = {}
    for fn in ("earliest.h5", "latest.h5", "cf.nc", "filters.h5", "tiny_earliest.h5", "tiny_latest.h5", "szip_raw.h5"):
        expected[fn] = describe(os.path.join(HERE, fn))
    with open(os.path.join(HERE, "expected.json"), "w") as fh:
        json.dump(expected, fh, separators=(",", ":"), sort_keys=True)
    print("h5py", h5py.__version__, "HDF5", h5py.version.hdf5_version)


if __name__ == "__main__":
    main()
