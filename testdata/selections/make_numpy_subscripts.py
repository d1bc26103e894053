"""NumPy's own results for selection texts, as zarrcat get and
nd.ParseSelection take them (the text is what goes between a[ and ]; a text wholly in brackets is
the subscript itself in nd.ParseSelection, so a lone index array is
written "[3, 1, 4],").

Run: ../shared/tools/zarr-python testdata/selections/make_numpy_subscripts.py
Writes testdata/selections/numpy_subscripts.json: for each array shape
(values np.arange(n).reshape(shape)) and text, the result's shape and
values in C order, or the exception NumPy raises. Read by
nd/numpy_ref_test.go and cmd/zarrcat/numpy_ref_test.go.
"""
import json, os
import numpy as np

texts = {
    (7,): [
        "[3, 1, 4],", "[-1, -7, 0],", "[2, 2, 2],", "[],", "[True, False, True, False, False, False, True],",
        "[7],", "[-8],", "[True, False],", "1:5, [0]", "[0], [0]", "...", "[1, 2], ...", "::-2", "5:1:-1",
        "[0, 1], 1:3",
    ],
    (5, 6): [
        "[0, 2, 4], [1, 1, 3]", "[0, 2, 4], [1]", "[1], [0, 2, 4]", "[4, 0], [-1, -6]", "[3, 3], [5, 5]",
        "[], []", "[0, 2, 4], 1", "1, [0, 2, 4]", "[0, 2, 4], :", ":, [5, 0, 1]", "[0, 2], 1:4",
        "1:4, [0, 2]", "::-1, [1, 1]", "[True, False, True, False, True], [1, 2, 3]",
        "[True, False, True, False, True], :", ":, [True, False, False, False, False, True]",
        "[0, 2, 4], [1, 3]", "[0, 5], [1, 1]", "[0, 1], [6, 1]", "[0, 1], [1, 2], [0, 0]", "..., [1, 2]",
        "[1, 2], ...", "[[1]], [0]" if False else "[-5, 4], [-6, 5]", "[0, 2, 4], []", "[], 1",
        "[0], [1], ...", "[True, True, False, False, False], [True, False, True, False, False, False]",
        "[True, False, True, False, True], [True, False, False, False, False, True]",
    ],
    (3, 4, 5): [
        "[0, 2], [1, 3], [4, 0]", "[0, 2], [1, 3], :", ":, [1, 3], [4, 0]", "[0, 2], :, [4, 0]",
        "1, :, [4, 0]", "[4, 0], :, 1" if False else "[2, 0], :, 1", ":, 1, [4, 0]", "1, [0, 3], :",
        "[0, 2], ..., [1, 4]", "..., [1, 2], [0, 4]", "[1], :, [0, 1, 2]", "0, [1, 2], [3, 4]",
        "[0, 1], [1, 2], 2:4", "::-1, [0, 3], [1, 2]", "[0, 2], 1:3, [4, 0]", "2, ..., [0, 4]",
        "[1, 1, 1], [2], [3]", "[0, 1], [1, 2, 3], :", "[], :, []", "[0, 2], [0, 1], [0, 1], [0, 1]",
        "0:2, 0:0, 0:2", "3:3", "0:2, 4:4", "1:1, [0, 1], [2, 3]",
    ],
}
cases = []
for shape, ts in texts.items():
    a = np.arange(int(np.prod(shape))).reshape(shape)
    for t in ts:
        c = {"shape": list(shape), "text": t}
        try:
            r = eval(f"a[{t}]", {"a": a, "True": True, "False": False})
            r = np.asarray(r)
            c["result_shape"] = list(r.shape)
            c["values"] = [int(v) for v in r.ravel()]
            c["tolist"] = json.dumps(r.tolist())
        except Exception as e:
            c["error"] = type(e).__name__
            c["message"] = str(e)
        cases.append(c)
out = {"numpy": np.__version__, "generator": "testdata/selections/make_numpy_subscripts.py", "cases": cases}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "numpy_subscripts.json"), "w") as f:
    json.dump(out, f, indent=0)
print(len(cases), "cases,", sum("error" in c for c in cases), "errors")
