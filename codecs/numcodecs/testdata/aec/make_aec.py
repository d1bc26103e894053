#!/usr/bin/env python3
"""Writes the reference streams of the AEC / szip codecs (aec.json):
libaec (Debian's libaec0, the library HDF5 and imagecodecs use) encodes
sample data with many parameter sets, through its own API (aec_buffer_encode:
what imagecodecs_aec writes) and through its SZIP compatibility API
(SZ_BufftoBuffCompress: what HDF5's szip filter writes after its 4-byte
size header). Each case is the input, the parameters and libaec's output;
the Go tests decode the output and compare with the input, and decode with
libaec (aec_buffer_decode) what gozarr's encoder wrote (aec_go.json, when
GOZARR_AEC_CHECK names it).

Run from the repository root in the reference chroot:
    ../shared/tools/zarr-python codecs/numcodecs/testdata/aec/make_aec.py
"""
import base64
import ctypes
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
aec = ctypes.CDLL("libaec.so.0")
sz = ctypes.CDLL("libsz.so.2")

SIGNED, THREE, MSB, PP, RESTRICTED, PAD_RSI, NOT_ENFORCE = 1, 2, 4, 8, 16, 32, 64


class Stream(ctypes.Structure):
    _fields_ = [
        ("next_in", ctypes.c_void_p), ("avail_in", ctypes.c_size_t), ("total_in", ctypes.c_size_t),
        ("next_out", ctypes.c_void_p), ("avail_out", ctypes.c_size_t), ("total_out", ctypes.c_size_t),
        ("bits_per_sample", ctypes.c_uint), ("block_size", ctypes.c_uint), ("rsi", ctypes.c_uint),
        ("flags", ctypes.c_uint), ("state", ctypes.c_void_p),
    ]


class SZParam(ctypes.Structure):
    _fields_ = [("options_mask", ctypes.c_int), ("bits_per_pixel", ctypes.c_int),
                ("pixels_per_block", ctypes.c_int), ("pixels_per_scanline", ctypes.c_int)]


def aec_run(fn, src, out_len, bits, block, rsi, flags):
    inb = ctypes.create_string_buffer(bytes(src), len(src) or 1)
    outb = ctypes.create_string_buffer(out_len)
    s = Stream()
    s.next_in, s.avail_in = ctypes.addressof(inb), len(src)
    s.next_out, s.avail_out = ctypes.addressof(outb), out_len
    s.bits_per_sample, s.block_size, s.rsi, s.flags = bits, block, rsi, flags
    rc = fn(ctypes.byref(s))
    if rc != 0:
        raise RuntimeError(f"libaec {fn.__name__} returned {rc}")
    return outb.raw[: s.total_out]


def aec_encode(src, bits, block, rsi, flags):
    return aec_run(aec.aec_buffer_encode, src, len(src) * 67 // 64 + 4096, bits, block, rsi, flags)


def aec_decode(src, out_len, bits, block, rsi, flags):
    return aec_run(aec.aec_buffer_decode, src, out_len, bits, block, rsi, flags)


def sz_encode(src, mask, bpp, ppb, ppsl):
    p = SZParam(mask, bpp, ppb, ppsl)
    out_len = ctypes.c_size_t(len(src) * 2 + 4096)
    outb = ctypes.create_string_buffer(out_len.value)
    inb = ctypes.create_string_buffer(bytes(src), len(src) or 1)
    rc = sz.SZ_BufftoBuffCompress(outb, ctypes.byref(out_len), inb, ctypes.c_size_t(len(src)), ctypes.byref(p))
    if rc != 0:
        raise RuntimeError(f"SZ_BufftoBuffCompress returned {rc}")
    return outb.raw[: out_len.value]


def sz_decode(src, out_len, mask, bpp, ppb, ppsl):
    p = SZParam(mask, bpp, ppb, ppsl)
    n = ctypes.c_size_t(out_len)
    outb = ctypes.create_string_buffer(out_len or 1)
    inb = ctypes.create_string_buffer(bytes(src), len(src) or 1)
    rc = sz.SZ_BufftoBuffDecompress(outb, ctypes.byref(n), inb, ctypes.c_size_t(len(src)), ctypes.byref(p))
    if rc != 0:
        raise RuntimeError(f"SZ_BufftoBuffDecompress returned {rc}")
    return outb.raw[: n.value]


def storage(bits, flags):
    if bits > 16:
        return 3 if bits <= 24 and flags & THREE else 4
    return 2 if bits > 8 else 1


def samples(kind, count, bits, signed, rng):
    lo, hi = (-(1 << (bits - 1)), (1 << (bits - 1)) - 1) if signed else (0, (1 << bits) - 1)
    if kind == "random":
        v = rng.integers(lo, hi, count, endpoint=True, dtype=np.int64)
    elif kind == "smooth":  # small steps: low k, second extension
        v = np.cumsum(rng.integers(-2, 3, count)) + (lo + hi) // 2
    elif kind == "lowent":  # mostly zeros and ones: zero blocks, second extension
        v = np.where(rng.random(count) < 0.9, 0, rng.integers(0, 3, count)) + (0 if not signed else 0)
    elif kind == "zeros":  # long zero runs, a few spikes: runs of zero blocks and ROS
        v = np.zeros(count, dtype=np.int64)
        v[rng.integers(0, count, max(1, count // 500))] = hi
    elif kind == "edges":  # values at the ends of the range: the predictor's folds
        v = rng.choice([lo, lo + 1, hi - 1, hi, (lo + hi) // 2], count)
    else:
        raise ValueError(kind)
    return np.clip(v, lo, hi)


def pack(v, bits, flags):
    size = storage(bits, flags)
    # libaec's encoder wants the unused high bits clear; its decoder
    # sign-extends signed samples to the storage size (the "dec" of a case).
    u = (v.astype(np.int64) & ((1 << bits) - 1)).astype(np.uint64)
    out = bytearray()
    order = "big" if flags & MSB else "little"
    for x in u:
        out += int(x).to_bytes(size, order)
    return bytes(out)


def b64(b):
    return base64.b64encode(b).decode()


def main():
    rng = np.random.default_rng(121)
    cases = []
    # Raw AEC (imagecodecs_aec): every sample size class, flags, block sizes, RSIs.
    params = [
        # bits, block, rsi, flags, kind, count
        (8, 8, 2, PP, "smooth", 1000),
        (8, 16, 128, PP, "lowent", 4096),
        (8, 32, 16, 0, "random", 777),
        (8, 64, 4, PP | SIGNED, "edges", 900),
        (1, 16, 8, PP, "lowent", 640),
        (2, 8, 4, PP | RESTRICTED, "lowent", 300),
        (3, 16, 4, RESTRICTED, "random", 333),
        (4, 16, 4, PP | RESTRICTED, "smooth", 500),
        (5, 8, 1, PP | SIGNED, "smooth", 200),
        (7, 32, 64, PP, "zeros", 5000),
        (12, 16, 32, PP | MSB, "smooth", 1500),
        (12, 16, 32, PP | SIGNED, "edges", 1500),
        (15, 8, 128, PP | MSB, "smooth", 3000),
        (16, 32, 64, PP, "random", 1000),
        (16, 16, 128, PP | SIGNED | MSB, "smooth", 2049),
        (16, 64, 4096, PP, "zeros", 9000),
        (16, 16, 2, 0, "lowent", 300),
        (17, 16, 8, PP, "smooth", 700),
        (20, 16, 8, PP | THREE | MSB, "smooth", 700),
        (24, 32, 8, PP | THREE | SIGNED, "edges", 700),
        (24, 8, 8, THREE, "random", 100),
        (31, 16, 16, PP | SIGNED, "smooth", 800),
        (32, 16, 16, PP, "smooth", 800),
        (32, 32, 16, PP | SIGNED | MSB, "edges", 800),
        (32, 8, 4, 0, "random", 300),
        (32, 64, 128, PP | SIGNED, "zeros", 5000),
        (16, 10, 7, PP | NOT_ENFORCE, "smooth", 555),  # szip-style odd block size
        (8, 16, 1, PP, "smooth", 1),
        (8, 16, 4, PP, "smooth", 0),
    ]
    for bits, block, rsi, flags, kind, count in params:
        v = samples(kind, count, bits, bool(flags & SIGNED), rng)
        raw = pack(v, bits, flags)
        enc = aec_encode(raw, bits, block, rsi, flags)
        dec = aec_decode(enc, len(raw), bits, block, rsi, flags)
        size = storage(bits, flags)
        want = raw
        if flags & SIGNED and flags & PP:
            want = b"".join(int(x).to_bytes(size, "big" if flags & MSB else "little", signed=True) for x in v)
        if dec != want:
            raise RuntimeError(f"libaec round trip failed: {bits} {block} {rsi} {flags}")
        cases.append({"kind": "aec", "bits": bits, "block": block, "rsi": rsi, "flags": flags,
                      "data": kind, "raw": b64(raw), "enc": b64(enc)})
        if dec != raw:
            cases[-1]["dec"] = b64(dec)
    # szip (HDF5's filter 4): SZ_BufftoBuffCompress, as HDF5 calls it.
    RAW, NN, EC, SZMSB, SZLSB, K13 = 128, 32, 4, 16, 8, 1
    szp = [
        # dtype, mask, ppb, ppsl, kind, count
        ("<u1", RAW | NN | SZLSB, 8, 64, "smooth", 1000),
        ("<u1", RAW | EC | SZLSB, 32, 100, "random", 700),       # ppsl % ppb != 0: padded lines
        ("<i2", RAW | NN | SZLSB, 16, 160, "smooth", 1600),
        (">i2", RAW | NN | SZMSB, 16, 50, "smooth", 999),
        ("<u2", RAW | EC | SZLSB | K13, 8, 8, "lowent", 512),
        ("<i4", RAW | NN | SZLSB, 8, 15, "smooth", 300),
        (">i4", RAW | NN | SZMSB, 32, 4096, "zeros", 3000),
        ("<f4", RAW | NN | SZLSB, 16, 256, "float", 1024),
        (">f4", RAW | NN | SZMSB, 8, 30, "float", 600),
        ("<f8", RAW | NN | SZLSB, 32, 400, "float", 800),
        ("<i8", RAW | EC | SZLSB, 16, 16, "smooth", 256),
        ("<u2", RAW | NN | SZLSB, 10, 25, "smooth", 500),          # even but not a power of two
    ]
    for dt, mask, ppb, ppsl, kind, count in szp:
        d = np.dtype(dt)
        if kind == "float":
            a = (np.sin(np.arange(count) / 17.0) * 100 + rng.standard_normal(count)).astype(d)
        else:
            bits = d.itemsize * 8
            a = samples(kind, count, min(bits, 62), d.kind == "i", rng).astype(d)
        raw = a.tobytes()
        bpp = d.itemsize * 8
        enc = sz_encode(raw, mask, bpp, ppb, ppsl)
        if sz_decode(enc, len(raw), mask, bpp, ppb, ppsl) != raw:
            raise RuntimeError(f"libsz round trip failed: {dt} {mask} {ppb} {ppsl}")
        cases.append({"kind": "szip", "dtype": dt, "mask": mask, "bits": bpp, "ppb": ppb, "ppsl": ppsl,
                      "data": kind, "raw": b64(raw), "enc": b64(enc)})
    with open(os.path.join(HERE, "aec.json"), "w") as f:
        json.dump({"libaec": "libaec0 1.1.7 (Debian)", "cases": cases}, f, indent=0)
    print(len(cases), "cases")


def check(path):
    """Decodes with libaec what gozarr's encoder wrote (aec_go.json)."""
    with open(path) as f:
        doc = json.load(f)
    bad = 0
    for c in doc["cases"]:
        raw, enc = base64.b64decode(c.get("dec") or c["raw"] or ""), base64.b64decode(c["enc"] or "")
        if c["kind"] == "aec":
            got = aec_decode(enc, len(raw), c["bits"], c["block"], c["rsi"], c["flags"])
        else:
            got = sz_decode(enc, len(raw), c["mask"], c["bits"], c["ppb"], c["ppsl"])
        if got != raw:
            bad += 1
            print("MISMATCH", {k: v for k, v in c.items() if k not in ("raw", "enc")})
    print(f"{len(doc['cases']) - bad}/{len(doc['cases'])} decoded equal by libaec")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "check":
        check(sys.argv[2])
    else:
        main()
