"""References made by kerchunk itself (Debian's python3-kerchunk) for the
fixtures it can describe: kerchunk's SingleHdf5ToZarr on cf.nc and on the
zlib+shuffle, raw and sparse datasets of filters.h5 (kerchunk refuses lzf,
lz4 and bitshuffle, and drops fletcher32). URLs are made relative to this
directory, so the references resolve wherever the repository is.

    ../../../shared/tools/zarr-python make_kerchunk.py
"""
import json
import os

import h5py
from kerchunk.hdf import SingleHdf5ToZarr

OUT = os.path.dirname(os.path.abspath(__file__))


def relative(refs, name):
    out = {}
    for k, v in refs["refs"].items():
        if isinstance(v, list) and v and isinstance(v[0], str):
            assert v[0].endswith(name), v
            v = [name] + v[1:]
        out[k] = v
    return {"version": refs.get("version", 1), "refs": out}


def main():
    src = os.path.join(OUT, "cf.nc")
    with open(src, "rb") as f:
        refs = SingleHdf5ToZarr(f, src, inline_threshold=0).translate()
    with open(os.path.join(OUT, "kerchunk_cf.json"), "w") as f:
        json.dump(relative(refs, "cf.nc"), f, indent=0, sort_keys=True)
    # A file of the datasets kerchunk supports.
    sub = os.path.join(OUT, "kerchunk_sub.h5")
    with h5py.File(os.path.join(OUT, "filters.h5"), "r") as h, h5py.File(sub, "w") as o:
        for name in ["zlib_shuffle", "raw_be", "sparse"]:
            d = h[name]
            n = o.create_dataset(name, shape=d.shape, dtype=d.dtype, chunks=d.chunks, shuffle=d.shuffle,
                                 compression=d.compression, compression_opts=d.compression_opts,
                                 fillvalue=d.fillvalue, track_times=False)
            if name == "sparse":
                n[0:8, :] = d[0:8, :]
            else:
                n[...] = d[...]
    with open(sub, "rb") as f:
        refs = SingleHdf5ToZarr(f, sub, inline_threshold=0).translate()
    with open(os.path.join(OUT, "kerchunk_sub.json"), "w") as f:
        json.dump(relative(refs, "kerchunk_sub.h5"), f, indent=0, sort_keys=True)


if __name__ == "__main__":
    main()


def parquet():
    """kerchunk's Parquet form (LazyReferenceMapper layout, written by
    kerchunk.df.refs_to_dataframe, record_size 3 so arrays span several
    refs files) of kerchunk's own JSON references; the target URLs are
    "../NAME", relative to each NAME.parq directory."""
    import types

    import cramjam
    for missing in ["gzip", "deflate"]:  # Debian's cramjam lacks them; fastparquet imports them, uses zstd here
        if not hasattr(cramjam, missing):
            setattr(cramjam, missing, types.SimpleNamespace(compress=None, decompress=None, decompress_into=None, compress_into=None))
    from kerchunk.df import refs_to_dataframe
    for name in ["kerchunk_cf", "kerchunk_sub"]:
        with open(os.path.join(OUT, name + ".json")) as f:
            refs = json.load(f)
        out = {}
        for k, v in refs["refs"].items():
            if isinstance(v, list):
                v = ["../" + v[0]] + v[1:]
            elif isinstance(v, dict):
                v = json.dumps(v)
            out[k] = v
        dst = os.path.join(OUT, name + ".parq")
        refs_to_dataframe({"version": 1, "refs": out}, dst, record_size=3)


if __name__ == "__main__":
    parquet()
