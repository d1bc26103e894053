"""Reference element conversions for dtype.Number, made with NumPy in the
zarr-python chroot:

    ../shared/tools/zarr-python dtype/testdata/make_numbers.py   (from dtype/)

Writes numbers.json: for each real type, little-endian elements (hex) with
their exact values (decimal text: Python's int, or repr of the float64 the
element widens to), and for each element and each target type the element
NumPy's astype makes (hex), or null when the target cannot hold the value
exactly as Number.Put requires: an integer out of range, a float that is
not a whole number (or NaN) for an integer type, a finite float that
overflows a narrower float, a value other than 0/1 for bool."""
import json, math
import numpy as np

TYPES = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
         "float16", "float32", "float64"]
VALUES = {
    "bool": [False, True],
    "int8": [0, 1, -1, 127, -128, 100],
    "int16": [0, -1, 255, 256, 32767, -32768, -200],
    "int32": [0, 65504, 65520, -2147483648, 2147483647, 16777217, -16777217],
    "int64": [0, -1, 9223372036854775807, -9223372036854775808, 9007199254740993, 2**53 + 2**29 + 1, -(2**40)],
    "uint8": [0, 1, 2, 255, 128],
    "uint16": [0, 65535, 256, 65504],
    "uint32": [0, 4294967295, 2147483648, 16777217],
    "uint64": [0, 18446744073709551615, 9223372036854775808, 2**53 + 1, 2**63 - 1],
    "float16": [0.0, -0.0, 1.0, -2.5, 65504.0, float("inf"), float("-inf"), float("nan"), 0.5, 255.0, 2.0**-24],
    "float32": [0.0, -1.0, 1.5, 3.4028234663852886e38, float("inf"), float("nan"), 65520.0, 65519.0,
                2147483648.0, -2147483648.0, 16777216.0, 1e-30, 4294967296.0],
    "float64": [0.0, 1.0, -1.0, 0.1, 1e300, -1e300, float("inf"), float("nan"), 255.0, 256.0, -129.0,
                9223372036854775808.0, -9223372036854775808.0, 18446744073709551616.0, 3.4028235677973366e38,
                3.4028234663852886e38, 65504.0, 65520.0, 1e-320, 2.0**53 + 1],
}

def value_text(dt, x):
    if dt == "bool":
        return "1" if x else "0"
    if dt.startswith(("int", "uint")):
        return str(int(x))
    return repr(float(x))

def exact(dt, x):
    """The value of element x (a NumPy scalar of dt) as a Python int or float."""
    if dt == "bool":
        return int(bool(x))
    if dt.startswith(("int", "uint")):
        return int(x)
    return float(x)

def fits(v, to):
    """Whether Number.Put stores v (int or float) into type to without error."""
    if to == "bool":
        return not (isinstance(v, float) and math.isnan(v)) and v in (0, 1)
    if to.startswith(("int", "uint")):
        if isinstance(v, float):
            if math.isnan(v) or math.isinf(v) or v != math.trunc(v):
                return False
            v = int(v)
        info = np.iinfo(to)
        return int(info.min) <= v <= int(info.max)
    # floats: a finite value must not overflow to inf
    if isinstance(v, float) and (math.isinf(v) or math.isnan(v)):
        return True
    with np.errstate(over="ignore"):
        r = np.array([v], dtype=object).astype(to)[0] if isinstance(v, int) else np.float64(v).astype(to)
    return bool(np.isfinite(r))

def convert(v, to):
    if to == "bool":
        return np.array([v != 0], dtype=np.bool_)
    if isinstance(v, int):
        if to.startswith("float"):
            # NumPy casts an int64/uint64 element straight to the float
            # (one rounding); Python ints go through float64 otherwise.
            src = np.uint64 if v > 2**63 - 1 else np.int64
            return np.array([v], dtype=src).astype(to)
        return np.array([v], dtype=to)
    with np.errstate(over="ignore", invalid="ignore"):
        if to.startswith("float"):
            return np.array([v], dtype=np.float64).astype(to)
        return np.array([int(v)], dtype=to)

out = {"types": {}}
for dt in TYPES:
    elems = np.array(VALUES[dt], dtype=dt)
    cases = []
    for x in elems:
        v = exact(dt, x)
        conv = {}
        for to in TYPES:
            conv[to] = convert(v, to).astype(np.dtype(to).newbyteorder("<")).tobytes().hex() if fits(v, to) else None
        cases.append({"elem": np.array([x], dtype=np.dtype(dt).newbyteorder("<")).tobytes().hex(),
                      "value": value_text(dt, x), "to": conv})
    out["types"][dt] = cases
out["numpy"] = np.__version__
with open("testdata/numbers.json", "w") as f:
    json.dump(out, f, indent=0, sort_keys=True)
    f.write("\n")
