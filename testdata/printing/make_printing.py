"""Makes floats.json: NumPy's default printing of float arrays, the
reference for zarrcat get's text view (cmd/zarrcat TestFloatLayoutAsNumpy).

Each case is a 1-D array (dtype, its little-endian bytes in hex) and the row
NumPy prints for it with its default options (precision 8, floatmode
"maxprec", suppress False), brackets removed and no line wrapping, the
separator one space as zarrcat's. Run it in the reference chroot:

    ../shared/tools/zarr-python testdata/printing/make_printing.py

Each view is a selection of a reference array in testdata/refdata and the
rows NumPy prints for it.

It is deterministic: a rerun leaves floats.json as it is.
"""
import json
import os
import sys
import warnings

import numpy as np

cases = [
    [1, 2.5, 10],
    [0.1, 0.2, 0.3],
    [1 / 3, 2 / 3, 1],
    [1e-5, 1],
    [1e-4, 1],
    [1e8, 1],
    [99999999, 1],
    [1e3, 1],
    [1001, 1],
    [-1.5, 2, float("nan"), float("inf"), float("-inf")],
    [float("nan")],
    [float("inf"), float("-inf")],
    [float("nan"), 1.5],
    [float("-inf"), 1000000.5],
    [0, 0],
    [-0.0, 0, 1],
    [123456.789, 0.001],
    [1e-300, 1e300, -2.5],
    [5e-324, 1],
    [1.7976931348623157e308],
    [3.141592653589793, 2.718281828459045],
    [0.123456789012, 5],
    [0.999999999, 1],
    [-1e-7, 3e-5],
    [12345678.9, 0.5],
    [2.0, 4.0, -8.0],
    [1.5e10, -2.25e-10, 3],
]
# Casting the large values to float16 overflows to inf, as meant.
warnings.simplefilter("ignore", RuntimeWarning)


def case(a):
    text = np.array2string(a, separator=" ", threshold=sys.maxsize, max_line_width=10**9)
    return {"dtype": str(a.dtype), "hex": a.astype("<" + a.dtype.str[1:]).tobytes().hex(), "row": text[1:-1]}


rng = np.random.default_rng(20261202)
out = []
for dt in ("float64", "float32", "float16"):
    arrays = [np.array(c, dtype=dt) for c in cases]
    arrays.append(rng.standard_normal(24).astype(dt))
    arrays.append((rng.random(16) * 1e6).astype(dt))
    arrays.append((rng.random(16) * 1e-3).astype(dt))
    arrays.append(np.round(rng.standard_normal(12) * 100, 2).astype(dt))
    for a in arrays:
        out.append(case(a))
complex_cases = [
    [1 + 2j, 3.5 - 1j],
    [0j, -0.0 - 0.0j],
    [1e-5 + 1j, 2 + 3e5j],
    [complex("nan+1j"), complex(1, float("inf")), complex(float("-inf"), float("-inf"))],
    [complex(1, float("nan"))],
    [1 / 3 + 2j / 3],
    [1e10 + 1e-10j, -5j],
]
for dt in ("complex128", "complex64"):
    arrays = [np.array(c, dtype=dt) for c in complex_cases]
    arrays.append((rng.standard_normal(10) + 1j * rng.standard_normal(10)).astype(dt))
    arrays.append((rng.standard_normal(8) * 1e4 + 1j * rng.random(8)).astype(dt))
    for a in arrays:
        out.append(case(a))

# Whole views of reference arrays, as zarrcat get --threshold 0 ARRAY SEL
# prints them: one row per line.
here = os.path.dirname(os.path.abspath(__file__))
views = []
for name, sel, key in [
    ("v3_dtype_float32", "0:3, 0:5", np.s_[0:3, 0:5]),
    ("v3_dtype_float32", "0:9, 0:9", np.s_[0:9, 0:9]),
    ("v3_dtype_float64", "::-1, 3:", np.s_[::-1, 3:]),
    ("v3_dtype_float16", "0:6, 0:7", np.s_[0:6, 0:7]),
    ("v3_dtype_complex64", "0:4, 0:5", np.s_[0:4, 0:5]),
    ("v3_dtype_complex128", "::7, ::-5", np.s_[::7, ::-5]),
    ("v3_complex_specials", "...", np.s_[...]),
]:
    a = np.load(os.path.join(here, "..", "refdata", name + ".npy"))[key]
    text = np.array2string(a, separator=" ", threshold=sys.maxsize, max_line_width=10**9)
    rows = [line.lstrip(" ").lstrip("[").rstrip("]") for line in text.split("\n")]
    views.append({"array": name, "selection": sel, "rows": rows})
path = os.path.join(here, "floats.json")
with open(path, "w") as f:
    json.dump({"numpy": np.__version__, "cases": out, "views": views}, f, indent=1)
    f.write("\n")
print(f"{len(out)} cases and {len(views)} views written to {path} (NumPy {np.__version__})")
