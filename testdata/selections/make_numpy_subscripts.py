"""NumPy's own results for selection texts, as zarrcat get and
nd.ParseSelection take them (the text is what goes between a[ and ]: a
text that is one list literal, "[3, 1, 4]", is one index array as in
NumPy; brackets around anything else, "[-4:, ...]", wrap the selection).

Run: ../shared/tools/zarr-python testdata/selections/make_numpy_subscripts.py
Writes testdata/selections/numpy_subscripts.json: for each array shape
(values np.arange(n).reshape(shape)) and text, the result's shape and
values in C order, or the exception NumPy raises. Read by
nd/numpy_ref_test.go and cmd/zarrcat/numpy_ref_test.go.

For texts with an index array or mask, also the orthogonal meaning
(zarr-python's oindex, NumPy's a[np.ix_(...)] with slices as ranges and
integers dropping their dimension): oindex_shape and oindex_values, or
oindex_error; zarrcat get --oindex and nd.Orthogonal give it.
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

def lit(v):
    """A NumPy array (or nested list) written as selection text."""
    v = np.asarray(v).tolist() if not isinstance(v, list) else v
    if isinstance(v, list):
        return "[" + ", ".join(lit(x) for x in v) + "]"
    return str(v)

rng = np.random.default_rng(27)
m56 = rng.random((5, 6)) < 0.4     # a 2-D mask of the whole (5, 6) array
m34 = rng.random((3, 4)) < 0.5     # of the first two dimensions of (3, 4, 5)
m45 = rng.random((4, 5)) < 0.3     # of the last two
m345 = rng.random((3, 4, 5)) < 0.2
two = np.zeros((3, 4), bool); two[0, 1] = two[2, 3] = True  # two true elements

# Index arrays of rank above 1 (NumPy's advanced indexing in full: the
# arrays broadcast together and the result takes the broadcast shape;
# boolean arrays of rank k stand for their k nonzero() arrays), negative,
# repeated and empty ones, and what NumPy refuses.
texts[(7,)] += [
    "[[0, 1], [2, 3]],", "[[-1], [-7]],", "[[3, 3, 3]],", "[[[1]], [[2]]],", "[[], []],", "[[[]]],",
    "[[0, 1], [2, 3]], ...", "..., [[6, 0]]", "[True, 2, False],", "[[True, 0], [1, 1]],",
    "[[0, 7]],", "[[-8]],", "[[0, 1], [2]],", "[[0], 1],", "[[1.5]],", "[1.5],",
    lit([[True, False, True, False, False, False, True]]) + ",",
]
texts[(5, 6)] += [
    "[[0], [2]], [1, 3]", "[[0, 1], [2, 3]], [[1], [2]]", "[[0, 1], [2, 3]], [[5, 4], [3, 2]]",
    "[[0, 1], [2, 3]],", "[[0, 1], [2, 3]], :", ":, [[0, 1], [2, 3]]", "[[0, 1], [2, 3]], 1",
    "1, [[0, 5], [2, 3]]", "[[-1, -5], [4, 0]], [[-6], [5]]", "[[1, 1], [1, 1]], [[2, 2]]",
    "[[]], [1]", "[[], []], :", "[[[]]], :", "[[0], [1]], []", "[[[0, 1]], [[2, 3]]], [[1]]",
    "::2, [[0, 1], [5, 4]]", "[[4, 3], [2, 1]], ::-2", "[True, 1], :", "[[True, False]], [1, 2]",
    lit(m56) + ",", lit(m56) + ", ...", lit(np.zeros((5, 6), bool)) + ",", lit(np.ones((5, 6), bool)) + ",",
    lit(m56[:, 0]) + ", " + lit(m56[0]),
    "[[0, 1], [2, 3]], [1, 2, 3]", "[[0, 1], [2, 3]], [[1], [2], [3]]", "[[0, 1]], [[]]",
    "[[0, 6]], [0]", "[[0]], [[0, -7]]", "[[0, 1]], [[0], [1]], [0]", "[[0, 1], [2]], :", "[0.5], :",
    "[[True, False], [False, True]],", lit(m56[:4]) + ",", lit(m56[:, :5]) + ",", lit(m56) + ", 0",
    "..., [[0, 1]], ...", "[[0, 9]], [0, 1, 2]", "[[0, 1]], [[9]]", "9, [[0, 1]]",
    # Basic indexing's errors, for comparison.
    "0, 1, 2", "5, 0", "0, -7", "::0", "..., ...", "1, ..., 2, 3",
    # np.newaxis (None): a new dimension of length 1, with basic and advanced indexes.
    "None", "None, 1", ":, None", "1, None, ::2", "..., None", "None, ..., None", "None, None, 0, 0",
    "[0, 1], None, [1, 2]", "None, [[0], [2]], [1, 3]", "[[0], [2]], [1, 3], None", "[0, 2], None",
    "None, [0, 2]", ":, None, [5, 0]", "None, 0, 1, 2",
    # A scalar boolean: a new axis of length 1 (True) or 0 (False), an advanced index.
    "True", "False", "True, [0, 1]", "[0, 1], True", "True, 1", "1, True", ":, True", "True, :, True",
    "False, [[0], [2]], [1, 3]", "True, [0, 1, 2], :, ..., True",
]
texts[(3, 4, 5)] += [
    ":, [[0, 1], [2, 3]], [[4], [0]]", "[[0, 1], [2, 0]], :, [[4], [0]]", "[[0, 1]], 1:3, 0",
    "0, [[1, 2]]", ":, [[1, 2]], 0", "[[1, 2]], :, 0", "[[[0]]], [[1, 2]], 0",
    "[[[0, 1], [1, 2]]], ::-1, [[0], [4]]", "[[0, 2], [1, 1]], ..., [-1]", "..., [[0, 1], [2, 3]]",
    "[[[0, 1], [2, 0]], [[1, 1], [0, 2]]], [[[3]]]", "[[[0, 1], [2, 0]], [[1, 1], [0, 2]]], [[[3]]], :",
    "2, 1:3, [[0], [4]]", "[[2], [0]], [[3, 1]], [[4, 0]]", "[[], []], :, 0", "[[]], [[]], [[]]",
    lit(m34) + ",", lit(m34) + ", 1", lit(m34) + ", ::2", ":, " + lit(m45), "0, " + lit(m45),
    "..., " + lit(m45), "1, ..., " + lit(m45), lit(m345) + ",", lit(two) + ", [0, 4]",
    lit(two) + ", [[0], [4]]", "[True, False, True], :, [1, 2]", "[True, False, True], [[1], [2]], :",
    lit(np.zeros((3, 4), bool)) + ", 0", lit(np.zeros((4, 5), bool)) + ",",
    "[0, 1], ..., " + lit(m45), "[[0, 1], [1, 2]], [[0, 1, 2]]", "[[0, 2]], [[4]], [[5]]",
    "[[0, 1]], :, [[0], [1]], [0]", lit(m34) + ", " + lit(m45[0]), "[0, 1], 9, [1, 2, 3]", "[0, 1], 9, [1, 2]",
]
texts[(2, 3, 4, 5)] = [
    ":, [[0]], :, [[1, 2]]", "[[1, 0]], [[2], [0]], ...", "..., [[3, 0]], [[4], [0]]",
    "0, :, [[1, 2]], 0", ":, " + lit(np.eye(3, 4, dtype=bool)) + ", 1:3", "[[0], [1]], 1:3, [[0, 3]], ::-2",
]

# A text that is one list literal is one index array or mask, as NumPy
# reads a[[3, 1, 4]] (brackets around anything else, "[-4:, ...]", wrap
# the selection: not NumPy syntax, so not here; nd's TestParseSelection).
texts[(7,)] += ["[3, 1, 4]", "[]", "[-1, -1, 0]", "[True, False, True, False, True, False, True]",
                "[[0, 1], [2, 3]]", "[[]]", "[7]", "[0,]", "[[6], [-7]]",
                "[[1, 2], [3]]", "[[0, 1], []]", "[[6], [0, 1, 2]]"]
texts[(5, 6)] += ["[3, 1, 4]", "[[0, 1], [2, 3]]", "[-1]", "[]", "[True, False, True, False, True]",
                  "[[-1], [0]]", "[0, 9]", "[[1, 2], [3]]", "[[0, 2, 4], [1, 3]]"]
texts[(3, 4, 5)] += ["[2, 0, 2]", "[[0, 1], [2, 0]]", "[]", "[3]", "[[[0]]]"]

def oindex(a, t):
    """a[t] with every index array and mask applied on its own dimension."""
    items = eval(f"np.s_[{t}]", {"np": np, "True": True, "False": False})
    if not isinstance(items, tuple):
        items = (items,)
    if sum(it is Ellipsis for it in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if Ellipsis in items:
        k = items.index(Ellipsis)
        items = items[:k] + (slice(None),) * (a.ndim - len(items) + 1) + items[k + 1:]
    items = items + (slice(None),) * (a.ndim - len(items))
    if len(items) > a.ndim:
        raise IndexError("too many indices for array")
    lists, drop = [], []
    for d, it in enumerate(items):
        n = a.shape[d]
        if isinstance(it, slice):
            lists.append(np.arange(n)[it])
        elif isinstance(it, bool) or it is None:
            # NumPy reads a scalar boolean as a new axis, not as 0 or 1;
            # the orthogonal meaning has no new axes (gozarr refuses both).
            raise IndexError("a new axis in an orthogonal selection")
        elif isinstance(it, int):
            if not -n <= it < n:
                raise IndexError(f"index {it} is out of bounds for axis {d} with size {n}")
            lists.append(np.array([it % n]))
            drop.append(d)
        else:
            v = np.asarray(it)
            if v.ndim > 1:
                # zarr-python's oindex: "integer arrays in an orthogonal
                # selection must be 1-dimensional only" (or Boolean arrays).
                raise IndexError(f"{'Boolean' if v.dtype == bool else 'integer'} arrays in an orthogonal selection must be 1-dimensional only")
            if v.dtype.kind not in "biu" and v.size:
                raise IndexError("only integer or boolean arrays")
            if v.dtype == bool:
                if v.shape != (n,):
                    raise IndexError(f"boolean index did not match axis {d}")
                v = np.nonzero(v)[0]
            else:
                v = v.astype(np.int64)
                if v.size and (v.min() < -n or v.max() >= n):
                    raise IndexError(f"index out of bounds for axis {d} with size {n}")
                v = v % n if v.size else v
            lists.append(v)
    r = a[np.ix_(*lists)]
    return r.reshape([s for d, s in enumerate(r.shape) if d not in drop])

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
            # What gozarr reports for it: ErrOutOfBounds for an index out
            # of bounds, else ErrInvalidSelection, with NumPy's message
            # in its text for IndexErrors (not for the refusal of floats,
            # whose message names numpy.newaxis, which gozarr lacks, nor
            # for ValueErrors about ragged lists, worded for arrays).
            c["sentinel"] = "ErrOutOfBounds" if "out of bounds" in str(e) else "ErrInvalidSelection"
            c["match_message"] = type(e) is IndexError and not str(e).startswith("only integers")
        if "[" in t:
            try:
                r = oindex(a, t)
                c["oindex_shape"] = list(r.shape)
                c["oindex_values"] = [int(v) for v in r.ravel()]
            except Exception as e:
                c["oindex_error"] = type(e).__name__
        cases.append(c)
out = {"numpy": np.__version__, "generator": "testdata/selections/make_numpy_subscripts.py", "cases": cases}
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "numpy_subscripts.json"), "w") as f:
    json.dump(out, f, indent=0)
print(len(cases), "cases,", sum("error" in c for c in cases), "errors")
