"""Make the object-array fixtures of testdata/objects (issue 26): numcodecs'
own codec fixtures for json2, msgpack2, vlen-array and categorize over
object arrays, and small Zarr v2 arrays whose object codec is one of them.

Run from the repository root in the zarr-python chroot, with numcodecs'
fixture directory (github.com/zarr-developers/numcodecs, fixture/) at
NUMCODECS_FIXTURE (default /tmp/ncfix/fixture):

    ../shared/tools/zarr-python testdata/objects/make_objects.py

zarr-python 3 cannot write object arrays with these codecs, so the v2
arrays are laid out as zarr-python 2 wrote them: .zarray with dtype "|O",
the object codec as first filter, each chunk the compressor's encoding of
the filters' encoding of the whole chunk (edge chunks padded with None).
Expected values are JSON (object arrays have no .npy without pickle):
{"shape": [...], "dtype": "|O", "values": [...]} in C order, NaN and the
infinities as {"float": "nan"}, bytes as {"bytes": base64}, NumPy arrays as
{"array": dtype, "values": [...]}.

Layout: numcodecs/CODEC/array.NN.json (expected values) and
numcodecs/CODEC/codec.CC/{config.json,encoded.NN.dat}; NAME.zarr beside
NAME.json for the arrays. The script is deterministic.
"""
import base64
import glob
import json
import math
import os
import shutil

import numcodecs
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
FIX = os.environ.get("NUMCODECS_FIXTURE", "/tmp/ncfix/fixture")
MAX_BYTES = 8 << 10  # encoded fixtures copied only up to this size
# For each codec: its fixtures (numcodecs' numbering), given array.NN.npy and
# codec.CC/encoded.NN.dat.


def plain(v):
    """A JSON-able form of one element."""
    if v is None or isinstance(v, (bool, str)):
        return v
    if isinstance(v, (bytes, np.bytes_)):
        return {"bytes": base64.b64encode(bytes(v)).decode()}
    if isinstance(v, np.ndarray):
        return {"array": v.dtype.str, "values": [plain(x) for x in v.tolist()]}
    if isinstance(v, (np.integer, int)):
        return int(v)
    if isinstance(v, (np.floating, float)):
        v = float(v)
        if math.isnan(v) or math.isinf(v):
            return {"float": str(v)}
        return v
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    if isinstance(v, dict):
        return {str(k): plain(x) for k, x in v.items()}
    raise TypeError(type(v))


def expected(a):
    return {"shape": list(a.shape), "dtype": a.dtype.str,
            "values": [plain(x) for x in a.ravel(order="C")]}


def dump(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, sort_keys=True, ensure_ascii=True)


def copy_numcodecs():
    out = os.path.join(HERE, "numcodecs")
    shutil.rmtree(out, ignore_errors=True)
    for codec in ["json2", "msgpack2", "vlen-array", "categorize/O"]:
        src = os.path.join(FIX, codec)
        for cdir in sorted(glob.glob(os.path.join(src, "codec.*"))):
            cfg = json.load(open(os.path.join(cdir, "config.json")))
            if cfg["id"] not in ("json2", "msgpack2", "vlen-array", "categorize"):
                continue  # numcodecs' older "json" and "msgpack" formats
            for enc in sorted(glob.glob(os.path.join(cdir, "encoded.*.dat"))):
                if os.path.getsize(enc) > MAX_BYTES:
                    continue
                i = enc.split(".")[-2]
                arr = np.load(os.path.join(src, "array.%s.npy" % i), allow_pickle=True)
                if codec == "json2" or codec == "msgpack2":
                    if arr.dtype != object:
                        continue  # gozarr uses these codecs for object arrays only
                top = os.path.join(out, codec.replace("/", "_"))
                dst = os.path.join(top, os.path.basename(cdir))
                os.makedirs(dst, exist_ok=True)
                dump(os.path.join(dst, "config.json"), cfg)
                shutil.copy(enc, dst)
                want = expected(arr)
                if arr.ndim > 1 and not arr.flags.c_contiguous and codec in ("vlen-array", "categorize/O"):
                    # numcodecs encodes these flat in the array's own
                    # order (reshape(-1, order="A")): a Zarr v2 chunk of
                    # order "F".
                    want["order"] = "F"
                dump(os.path.join(top, "array.%s.json" % i), want)


def write_v2(name, data, chunks, obj_codec, compressor=None, written=None):
    """A v2 object array NAME.zarr laid out as zarr-python 2 wrote it."""
    path = os.path.join(HERE, name + ".zarr")
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    meta = {"chunks": list(chunks), "compressor": compressor.get_config() if compressor else None,
            "dimension_separator": ".", "dtype": "|O", "fill_value": None,
            "filters": [obj_codec.get_config()], "order": "C", "shape": list(data.shape),
            "zarr_format": 2}
    with open(os.path.join(path, ".zarray"), "w") as f:
        json.dump(meta, f, indent=4, sort_keys=True)
    want = np.empty(data.shape, dtype=object)
    grid = [range(0, s, c) for s, c in zip(data.shape, chunks)]
    for idx in np.ndindex(*[len(g) for g in grid]):
        if written is not None and not written(idx):
            continue
        sl = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(idx, chunks, data.shape))
        chunk = np.empty(chunks, dtype=object)
        chunk[...] = None
        part = data[sl]
        chunk[tuple(slice(0, n) for n in part.shape)] = part
        want[sl] = part
        enc = obj_codec.encode(chunk)
        if compressor:
            enc = compressor.encode(enc)
        with open(os.path.join(path, ".".join(map(str, idx))), "wb") as f:
            f.write(enc)
    dump(os.path.join(HERE, name + ".json"), expected(want))


def objects(values, shape):
    a = np.empty(len(values), dtype=object)
    for i, v in enumerate(values):
        a[i] = v
    return a.reshape(shape)


def main():
    copy_numcodecs()
    mixed = objects(["foo", 1, 2.5, None, [1, "a", [2.0]], {"k": [1, 2], "b": None}, True, -7,
                     "¡Hola!", float("nan"), {"z": {"y": "x"}}, 10**15], (3, 4))
    write_v2("json2_mixed", mixed, (2, 3), numcodecs.JSON(), compressor=numcodecs.Zlib(level=1),
             written=lambda idx: idx != (1, 1))
    packed = objects(["foo", b"\x00\xffbytes", 1, 2.5, None, [1, b"a", [2.0]], {"k": [1, 2]}, False,
                      -(2**40), "Hej Världen!"], (10,))
    write_v2("msgpack2_mixed", packed, (4,), numcodecs.MsgPack(), written=lambda idx: idx != (1,))
    ragged = objects([np.array(v, dtype="<i4") for v in
                      [[1, 2, 3], [], [4], [5, 6, -7, 8], [9], [10, 11], [], [12]]], (2, 4))
    write_v2("vlen_array_i4", ragged, (1, 4), numcodecs.VLenArray("<i4"),
             compressor=numcodecs.Zstd(level=1))
    fragged = objects([np.array(v, dtype="<f8") for v in [[1.5], [], [2.25, -0.0, 3e300]]], (3,))
    write_v2("vlen_array_f8", fragged, (3,), numcodecs.VLenArray("<f8"))
    labels = ["ƒöõ", "ßàř", "ßāẑ", "ƪùüx"]
    cats = objects([labels[i % 4] for i in [0, 1, 2, 3, 3, 2, 1]] + ["ßàř"], (8,))
    write_v2("categorize_O", cats, (3,), numcodecs.Categorize(labels, dtype=object),
             compressor=numcodecs.Zlib(level=1))


if __name__ == "__main__":
    main()
