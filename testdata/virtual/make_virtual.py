"""Make the virtual-dataset fixtures: small HDF5 and NetCDF-4 files written by
h5py / netCDF4 (with hdf5plugin's filters), kerchunk references to them written
by hand from h5py's chunk addresses (dataset.id.get_chunk_info), and the values
h5py reads as .npy files (the expected values).

Run from this directory with the reference chroot:
    ../../../shared/tools/zarr-python make_virtual.py
(or ../shared/tools/zarr-python testdata/virtual/make_virtual.py from the repo
root, after cd testdata/virtual). Outputs are deterministic but for HDF5's own
timestamps, which the files do not carry (track_times=False).
"""
import base64
import json
import os

import h5py
import hdf5plugin
import numcodecs
import numpy as np

OUT = os.path.dirname(os.path.abspath(__file__))


def chunk_refs(ds, url):
    """kerchunk chunk references of a chunked dataset: key -> [url, off, size]."""
    out = {}
    grid = [(s + c - 1) // c for s, c in zip(ds.shape, ds.chunks)]
    for i in range(ds.id.get_num_chunks()):
        info = ds.id.get_chunk_info(i)
        assert info.filter_mask == 0, (ds.name, i, info.filter_mask)
        coords = [o // c for o, c in zip(info.chunk_offset, ds.chunks)]
        assert all(0 <= c < g for c, g in zip(coords, grid))
        out[".".join(map(str, coords))] = [url, int(info.byte_offset), int(info.size)]
    return out


def zarray(ds, filters, compressor=None, dtype=None):
    fill = ds.fillvalue
    if isinstance(fill, np.generic):
        fill = fill.item()
    return {
        "zarr_format": 2,
        "shape": list(ds.shape),
        "chunks": list(ds.chunks or ds.shape),
        "dtype": dtype or ds.dtype.str,
        "fill_value": fill,
        "order": "C",
        "filters": filters or None,
        "compressor": compressor,
    }


def save(name, arr):
    """Saves h5py's values, little-endian (as gozarr reads them)."""
    if arr.dtype.byteorder == ">":
        arr = arr.astype(arr.dtype.newbyteorder("<"))
    np.save(os.path.join(OUT, name + ".npy"), np.ascontiguousarray(arr))


def main():
    f = "filters.h5"
    rng = np.random.default_rng(28)
    base = np.cumsum(rng.normal(size=(20, 30)), axis=1).astype("<f4")
    ints = ((np.arange(20 * 30, dtype="<i4").reshape(20, 30) // 7) % 50 + rng.integers(0, 3, size=(20, 30))).astype("<i4")
    refs = {".zgroup": {"zarr_format": 2}, ".zattrs": {"title": "gozarr virtual fixtures"}}
    plan = {}
    with h5py.File(os.path.join(OUT, f), "w", libver="earliest", track_order=False) as h:
        kw = dict(chunks=(8, 10), track_times=False)
        plan["zlib_shuffle"] = (h.create_dataset("zlib_shuffle", data=base, shuffle=True, compression="gzip", compression_opts=4, **kw),
                                [{"id": "shuffle", "elementsize": 4}, {"id": "zlib", "level": 4}])
        plan["raw_be"] = (h.create_dataset("raw_be", data=base.astype(">f8"), **kw), [])
        plan["lzf"] = (h.create_dataset("lzf", data=ints, compression="lzf", **kw), [{"id": "imagecodecs_lzf", "header": False}])
        plan["fletcher"] = (h.create_dataset("fletcher", data=base, shuffle=True, compression="gzip", fletcher32=True, **kw),
                            [{"id": "shuffle", "elementsize": 4}, {"id": "zlib", "level": 4}, {"id": "fletcher32"}])
        plan["lz4"] = (h.create_dataset("lz4", data=ints, **hdf5plugin.LZ4(nbytes=0), **kw), [{"id": "imagecodecs_lz4h5"}])
        plan["lz4_blocks"] = (h.create_dataset("lz4_blocks", data=ints, **hdf5plugin.LZ4(nbytes=64), **kw), [{"id": "imagecodecs_lz4h5"}])
        plan["bitshuffle_lz4"] = (h.create_dataset("bitshuffle_lz4", data=base, **hdf5plugin.Bitshuffle(nelems=0, cname="lz4"), **kw),
                                  [{"id": "bitshuffle", "elementsize": 4, "blocksize": 0, "cname": "lz4"}])
        plan["bitshuffle_zstd"] = (h.create_dataset("bitshuffle_zstd", data=base.astype("<f8"), **hdf5plugin.Bitshuffle(nelems=64, cname="zstd"), **kw),
                                   [{"id": "bitshuffle", "elementsize": 8, "blocksize": 64, "cname": "zstd"}])
        plan["bitshuffle"] = (h.create_dataset("bitshuffle", data=ints, **hdf5plugin.Bitshuffle(nelems=16, cname="none"), **kw),
                              [{"id": "bitshuffle", "elementsize": 4, "blocksize": 16, "cname": "none"}])
        # CF packing: int16 with scale_factor and add_offset, read as float64
        # through fixedscaleoffset the way VirtualiZarr writes it.
        packed = np.round((base.astype("f8") * 10 + 50)).astype("<i2")
        d = h.create_dataset("packed", data=packed, shuffle=True, compression="gzip", **kw)
        d.attrs["scale_factor"] = 0.1
        d.attrs["add_offset"] = -5.0
        plan["packed"] = (d, [{"id": "fixedscaleoffset", "offset": -5.0, "scale": 10.0, "dtype": "<f8", "astype": "<i2"},
                              {"id": "shuffle", "elementsize": 2}, {"id": "zlib", "level": 4}])
        # Missing chunks: only the first row of chunks is written.
        d = h.create_dataset("sparse", shape=(20, 30), dtype="<i4", fillvalue=-1, **kw)
        d[0:8, :] = ints[0:8, :]
        plan["sparse"] = (d, [])
        contig = h.create_dataset("contiguous", data=base[:4], track_times=False)
        compact = h.create_dataset("compact", data=np.arange(6, dtype="<i2"), track_times=False,
                                   dcpl=compact_dcpl())
    with h5py.File(os.path.join(OUT, f), "r") as h:
        for name, (_, filters) in plan.items():
            ds = h[name]
            za = zarray(ds, filters, dtype="<f8" if name == "packed" else None)
            refs[name + "/.zarray"] = za
            refs[name + "/.zattrs"] = {"_ARRAY_DIMENSIONS": ["y", "x"]}
            for k, v in chunk_refs(ds, "{{f}}").items():
                refs[name + "/" + k] = v
            vals = ds[...]
            if name == "packed":
                vals = numcodecs.FixedScaleOffset(offset=-5.0, scale=10.0, dtype="<f8", astype="<i2").decode(vals.tobytes()).reshape(ds.shape)
                np.testing.assert_allclose(vals, ds[...] * 0.1 - 5.0, rtol=1e-12)
            save(name, vals)
        ds = h["contiguous"]
        off = ds.id.get_offset()
        refs["contiguous/.zarray"] = json.dumps(zarray(ds, []))  # as a string, as kerchunk writes them
        refs["contiguous/0.0"] = ["{{f}}", int(off), int(ds.id.get_storage_size())]
        save("contiguous", ds[...])
        ds = h["compact"]
        refs["compact/.zarray"] = zarray(ds, [])
        refs["compact/0"] = "base64:" + base64.b64encode(ds[...].tobytes()).decode()
        save("compact", ds[...])

    doc = {"version": 1, "templates": {"f": f}, "refs": refs}
    with open(os.path.join(OUT, "filters.json"), "w") as fp:
        json.dump(doc, fp, indent=0, sort_keys=True)

    # Version 0 and gen forms of one uncompressed, early-allocated dataset,
    # whose chunks lie one after the other.
    g = "gen.h5"
    with h5py.File(os.path.join(OUT, g), "w") as h:
        dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
        dcpl.set_chunk((4, 5))
        dcpl.set_alloc_time(h5py.h5d.ALLOC_TIME_EARLY)
        dcpl.set_obj_track_times(False)
        sid = h5py.h5s.create_simple((8, 10))
        dsid = h5py.h5d.create(h.id, b"grid", h5py.h5t.STD_I16LE, sid, dcpl=dcpl)
        ds = h5py.Dataset(dsid)
        ds[...] = (np.arange(80, dtype="<i2").reshape(8, 10) * 3) - 40
    with h5py.File(os.path.join(OUT, g), "r") as h:
        ds = h["grid"]
        cr = chunk_refs(ds, g)
        size = 4 * 5 * 2
        first = cr["0.0"][1]
        for k, (_, o, n) in cr.items():
            i, j = map(int, k.split("."))
            assert n == size and o == first + (i * 2 + j) * size, (k, o, n)
        za = zarray(ds, [])
        v0 = {".zgroup": json.dumps({"zarr_format": 2}), "grid/.zarray": json.dumps(za)}
        v0.update({"grid/" + k: v for k, v in cr.items()})
        with open(os.path.join(OUT, "gen_v0.json"), "w") as fp:
            json.dump(v0, fp, indent=0, sort_keys=True)
        gen = {"version": 1, "templates": {"u": g},
               "refs": {".zgroup": {"zarr_format": 2}, "grid/.zarray": za},
               "gen": [{"key": "grid/{{i}}.{{j}}", "url": "{{u}}",
                        "offset": "{{%d + (i * 2 + j) * %d}}" % (first, size), "length": str(size),
                        "dimensions": {"i": {"stop": 2}, "j": [0, 1]}}]}
        with open(os.path.join(OUT, "gen_v1.json"), "w") as fp:
            json.dump(gen, fp, indent=0, sort_keys=True)
        save("grid", ds[...])

    # A NetCDF-4 file as netCDF4 writes it: zlib + shuffle, dimensions.
    import netCDF4
    n = "cf.nc"
    with netCDF4.Dataset(os.path.join(OUT, n), "w") as nc:
        nc.createDimension("time", 6)
        nc.createDimension("lat", 9)
        t = nc.createVariable("time", "f8", ("time",))
        t[:] = np.arange(6) * 24.0
        v = nc.createVariable("temp", "f4", ("time", "lat"), zlib=True, shuffle=True, complevel=5, chunksizes=(4, 5))
        v.units = "K"
        v[:] = 250 + base[:6, :9]
    with h5py.File(os.path.join(OUT, n), "r") as h:
        ds = h["temp"]
        nrefs = {".zgroup": {"zarr_format": 2},
                 "temp/.zarray": zarray(ds, [{"id": "shuffle", "elementsize": 4}, {"id": "zlib", "level": 5}]),
                 "temp/.zattrs": {"_ARRAY_DIMENSIONS": ["time", "lat"], "units": "K"}}
        nrefs.update({"temp/" + k: v for k, v in chunk_refs(ds, n).items()})
        save("temp", ds[...])
    with open(os.path.join(OUT, "cf.json"), "w") as fp:
        json.dump({"version": 1, "refs": nrefs}, fp, indent=0, sort_keys=True)


def compact_dcpl():
    dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
    dcpl.set_layout(h5py.h5d.COMPACT)
    return dcpl


if __name__ == "__main__":
    main()
