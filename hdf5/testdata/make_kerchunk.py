#!/usr/bin/env python3
"""kerchunk's own references to every reference file of package hdf5
(the files expected.json describes), in both of kerchunk's forms:

    kerchunk/NAME.json   SingleHdf5ToZarr(inline_threshold=0).translate()
    kerchunk/NAME.parq/  kerchunk.df.refs_to_dataframe of the same (the
                         LazyReferenceMapper layout, its default record_size)
    kerchunk/report.json per file and dataset: {"status": "ok"}, or
                         "refused" (kerchunk left the dataset out; "why":
                         its exception's first line), or "wrong" (kerchunk
                         describes it, its references do not give h5py's
                         values; "why"); "strings": the values of a
                         variable-length string dataset

Target URLs are relative ("../NAME" from the JSON, "../../NAME" from each
NAME.parq directory), so the references resolve wherever the repository is.
Run from the repository root in the reference chroot (Debian's
python3-kerchunk 0.2.10, python3-fastparquet, python3-hdf5plugin):

    ../shared/tools/zarr-python hdf5/testdata/make_kerchunk.py
"""
import json
import os
import shutil
import types
import warnings

import h5py
import hdf5plugin  # noqa: F401 (kerchunk reads filter ids through h5py)
from kerchunk.hdf import SingleHdf5ToZarr

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "kerchunk")


def reasons(path):
    """What kerchunk does with each dataset: its translator run on each
    dataset alone, exceptions raised rather than quashed."""
    out = {}
    with h5py.File(path, "r") as h:
        names = []
        h.visititems(lambda n, o: names.append(n) if isinstance(o, h5py.Dataset) else None)
        t = SingleHdf5ToZarr(h, path, inline_threshold=0, error="raise")
        for n in names:
            d = h[n]
            r = {"status": "ok"}
            try:
                t._translator(n, d)
            except Exception as e:  # noqa: BLE001 (the reason is the record)
                r = {"status": "refused", "why": (type(e).__name__ + ": " + str(e)).splitlines()[0][:200]}
            layout = d.id.get_create_plist().get_layout()
            if r["status"] == "ok" and layout == h5py.h5d.COMPACT and d.nbytes >= t.inline:
                r = {"status": "wrong", "why": "kerchunk writes no chunk for compact data of inline_threshold bytes or more"}
            if r["status"] == "ok" and layout == h5py.h5d.CHUNKED:
                for i in range(d.id.get_num_chunks()):
                    off = d.id.get_chunk_info(i).chunk_offset
                    if any(o >= s for o, s in zip(off, d.shape)):
                        r = {"status": "wrong", "why": "kerchunk keys chunks by H5Dget_chunk_info's offsets, "
                             "which HDF5 gets wrong for an extensible array whose unlimited dimension is not the first (%s)" % (off,)}
                        break
            if d.dtype.kind == "O" and h5py.check_string_dtype(d.dtype):
                r["strings"] = [x.decode() if isinstance(x, bytes) else x for x in d[()].ravel().tolist()]
            out["/" + n] = r
    return out


def relative(refs, name, up):
    out = {}
    for k, v in refs["refs"].items():
        if isinstance(v, list) and v and isinstance(v[0], str):
            v = [up + name] + v[1:]
        out[k] = v
    return {"version": 1, "refs": out}


def main():
    import cramjam
    for missing in ["gzip", "deflate"]:  # Debian's cramjam lacks them; fastparquet imports them, uses zstd here
        if not hasattr(cramjam, missing):
            setattr(cramjam, missing, types.SimpleNamespace(compress=None, decompress=None, decompress_into=None, compress_into=None))
    from kerchunk.df import refs_to_dataframe

    with open(os.path.join(HERE, "expected.json")) as fh:
        files = sorted(json.load(fh))
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)
    report = {}
    for name in files:
        src = os.path.join(HERE, name)
        report[name] = reasons(src)
        with open(src, "rb") as f, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            refs = SingleHdf5ToZarr(f, src, inline_threshold=0, error="ignore").translate()
        stem = os.path.splitext(name)[0]
        with open(os.path.join(OUT, stem + ".json"), "w") as fh:
            json.dump(relative(refs, name, "../"), fh, indent=0, sort_keys=True)
        pq = relative(refs, name, "../../")
        for k, v in pq["refs"].items():
            if isinstance(v, dict):
                pq["refs"][k] = json.dumps(v)
        refs_to_dataframe(pq, os.path.join(OUT, stem + ".parq"), record_size=10000)
    with open(os.path.join(OUT, "report.json"), "w") as fh:
        json.dump(report, fh, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
