"""Reference conversions for gozarr's narrow data types, made with ml_dtypes
(Debian python3-ml-dtypes) in the zarr-python chroot:

    ../shared/tools/zarr-python dtype/testdata/make_narrow.py

Writes narrow.json: for every type, the float64 value of each of its bit
patterns (decode), and the bit pattern ml_dtypes rounds a set of float64
inputs to (encode), NaN as the string "nan"."""
import json, math, os, struct
import numpy as np
import ml_dtypes as md

FLOATS = ["float8_e3m4", "float8_e4m3", "float8_e4m3fn", "float8_e4m3b11fnuz", "float8_e4m3fnuz",
          "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu", "float6_e2m3fn", "float6_e3m2fn",
          "float4_e2m1fn"]
INTS = ["int2", "int4", "uint2", "uint4"]

def enc(x):
    if isinstance(x, float) and math.isnan(x):
        return "nan"
    if isinstance(x, float) and math.isinf(x):
        return "inf" if x > 0 else "-inf"
    return x

rng = np.random.default_rng(7)
inputs = [0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, 3.0, 3.5, 1e-9, -1e-9, 1e9, -1e9, math.inf, -math.inf, math.nan,
          0.1, 0.3, 448.0, 464.0, 480.0, 57344.0, 61440.0, 6.0, 7.0, 8.0, 240.0, 1e-3, 2**-9, 2**-10, 3 * 2**-11]
inputs += [float(v) for v in rng.normal(0, 4, 200)] + [float(v) for v in rng.uniform(-500, 500, 100)]
inputs += [float(v) for v in np.exp2(rng.uniform(-30, 30, 100))]

out = {"inputs": [enc(v) for v in inputs], "types": {}}
for name in FLOATS:
    t = getattr(md, name)
    bits = 8 if name.startswith("float8") else int(name[5])
    n = 1 << bits
    raw = np.arange(n, dtype=np.uint8).view(t)
    dec = [enc(float(v)) for v in raw.astype(np.float64)]
    e = np.array(inputs, dtype=np.float64).astype(t).view(np.uint8)
    out["types"][name] = {"bits": bits, "decode": dec, "encode": [int(v) for v in e]}
for name in INTS:
    t = getattr(md, name)
    bits = int(name[-1])
    raw = np.arange(1 << bits, dtype=np.uint8).view(t)
    out["types"][name] = {"bits": bits, "decode": [int(v) for v in raw.astype(np.int64)]}
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "narrow.json"), "w") as f:
    json.dump(out, f, indent=0)
print("wrote", os.path.join(here, "narrow.json"))
