"""Writes the ZFP reference data gozarr's codecs/zfp tests compare with.

Run in the reference chroot (Debian's python3-zfpy 1.0.1, numpy):
    /work/shared/tools/zarr-python gen.py        (from this directory)

For every scalar type (f4, f8, i4, i8), dimensionality (1-4, shapes with
partial blocks) and mode (fixed rate, fixed precision, fixed accuracy,
reversible; several parameters each, including ones that need the long
64-bit mode word), it writes:
    in/<type>_<dims>d.bin          the input array, little-endian, C order
    enc/<case>.zfp                 zfpy.compress_numpy(input, **params)
and manifest.json listing every case with its parameters, shape, type and
the SHA-256 of zfpy.decompress_numpy(enc) (the decoded bytes themselves
would be most of the data).
"""
import hashlib
import json
import os

import numpy as np
import zfpy

SHAPES = {1: (37,), 2: (9, 7), 3: (5, 6, 7), 4: (3, 5, 4, 6)}
TYPES = ["f4", "f8", "i4", "i8"]


def data(t, d):
    shape = SHAPES[d]
    rng = np.random.default_rng(1000 * d + TYPES.index(t))
    grids = np.meshgrid(*[np.linspace(0, 3, n) for n in shape], indexing="ij")
    smooth = sum(np.sin(g * (k + 1)) for k, g in enumerate(grids))
    if t[0] == "f":
        a = (1000 * smooth + rng.normal(0, 1, shape)).astype(t)
        flat = a.reshape(-1)
        # A few blocks of special values: zeros, tiny values, a negative zero.
        flat[:4] = 0
        flat[4:8] = [1e-30, -2e-30, 3e-31, 0]
        flat[8] = -0.0
    else:
        a = (100000 * smooth + rng.integers(-50, 50, shape)).astype(t)
        a.reshape(-1)[:4] = 0
    return a


def special(t):
    """Values that take the reversible coder's other paths."""
    info = np.finfo(t)
    v = np.array([np.nan, np.inf, -np.inf, -0.0, info.tiny / 4, -info.tiny / 8, info.max, 1.0,
                  0, 0, 0, 0, -0.0, -0.0, -0.0, -0.0,
                  1.5, 2.5, -3.25, 1e-3, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16], dtype=t)
    return v.reshape(2, 16)


def modes(t, d):
    out = [("rev", {})]
    # Rates under 9 (float) or 12 (double) bits per block overrun the C
    # library's buffer (modes.rst says it does not respect them), so none here.
    rates = [8, 16, 3 if d == 1 else 1.5] + ([20] if d >= 3 else [])
    out += [("rate%g" % r, {"rate": r}) for r in rates]
    out += [("prec%d" % p, {"precision": p}) for p in (0, 5, 20, 64)]
    if True:  # zfpy sets accuracy for integers too (the tolerance is then ignored)
        out += [("tol%g" % a, {"tolerance": a}) for a in (0, 1e-3, 0.5, 1e300)]
    return out


def main():
    for sub in ("in", "enc"):
        os.makedirs(sub, exist_ok=True)
    cases = []
    inputs = [(t, d, data(t, d)) for t in TYPES for d in (1, 2, 3, 4)]
    inputs += [(t, "special", special(t)) for t in ("f4", "f8")]
    for t, d, a in inputs:
        base = "%s_%s" % (t, "%dd" % d if isinstance(d, int) else d)
        a.astype("<" + t).tofile("in/%s.bin" % base)
        for name, params in modes(t, a.ndim):
            case = "%s_%s" % (base, name)
            enc = zfpy.compress_numpy(a, **params)
            dec = zfpy.decompress_numpy(enc)
            assert dec.shape == a.shape and dec.dtype == a.dtype
            with open("enc/%s.zfp" % case, "wb") as f:
                f.write(enc)
            cases.append({"case": case, "input": base, "dtype": t, "shape": list(a.shape),
                          "params": params, "encoded_bytes": len(enc),
                          "sha256_decoded": hashlib.sha256(dec.tobytes()).hexdigest()})
    with open("manifest.json", "w") as f:
        f.write('{"zfpy": "1.0.1 (Debian python3-zfpy)", "cases": [\n')
        f.write(",\n".join(json.dumps(c) for c in cases))
        f.write("\n]}\n")
    print(len(cases), "cases")


main()
