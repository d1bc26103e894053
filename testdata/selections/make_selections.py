#!/usr/bin/env python3
"""Reference selections of the zarr-python 3.4 corpus (testdata/refdata).

Run from the repository root in the reference chroot:

    ../shared/tools/zarr-python testdata/selections/make_selections.py [REFDIR [OUTDIR]]

REFDIR defaults to testdata/refdata, OUTDIR to testdata/selections. The script
opens a spread of the corpus arrays with zarr-python and records, per array,
orthogonal (oindex), coordinate (vindex), boolean-mask (vindex by a mask of the
array's shape) and block (blocks) selections, their error cases, and write
cases (oindex/vindex/mask/blocks writes on a copy, repeated indices included).
It writes OUTDIR/cases.json (one case per line) and the expected values as
.npy files in OUTDIR/expected/ (little-endian, C order). Everything is
deterministic: random selections come from a generator seeded per array.

It also writes OUTDIR/numpy_spellings.json: NumPy's own results for selection
texts as a user types them (ranks 1-4, from a seeded generator; see
spelling_cases below); with --spellings, only that file.

Every read is also computed with NumPy on the array's full contents and must
agree with zarr-python wherever zarr-python answers. Where zarr-python 3.4
raises but NumPy's meaning is defined (negative slice steps: NegativeStepError;
an Ellipsis after an index array; masks and blocks of a zero-length dimension;
a block slice starting before the first block) the NumPy result is recorded,
with "reference": "numpy" and the zarr-python exception in
"zarr_python_error". Error cases are those where both raise. Writes record NumPy's result (repeated indices: the last
write wins); "zarr_python_agrees" says whether zarr-python 3.4 wrote the same
(it does not always: it orders the writes of one chunk with an unstable sort).

See README.md beside this script for the format of cases.json.
"""

import json
import os
import random
import shutil
import sys
import tempfile
import zlib

import numpy as np
import zarr

# Arrays read (corpus case names): every dtype family, sharded, nested
# sharding, edge chunks, missing chunks and shards, 1-D to 4-D, v2 F order.
READ_ARRAYS = [
    "v3_dtype_bool",
    "v3_dtype_int8",
    "v3_endian_big_int16",
    "v3_shard_start",
    "v3_fill_int64_min",
    "v3_shard_3d_blosc",
    "v3_shard_uncompressed_zero_chunks",
    "v3_endian_big_uint32",
    "v3_fill_uint64_max",
    "v3_dtype_float16",
    "v3_shard_end_edges",
    "v3_shard_missing",
    "v3_dtype_complex64",
    "v3_endian_big_complex128",
    "v3_shard_nested",
    "v3_ndim1_many_chunks",
    "v3_ndim3",
    "v3_edge_chunk_larger_than_array",
    "v3_shard_4d",
    "v3_group/measurements/raw/samples",
    "v3_edge_zero_length",
    "v2_order_F_3d_blosc",
]

# Arrays written (on a copy).
WRITE_ARRAYS = [
    "v3_endian_big_int16",
    "v3_shard_end_edges",
    "v3_shard_nested",
    "v3_shard_uncompressed_zero_chunks",
    "v3_fill_bool_true",
    "v3_endian_big_complex128",
    "v3_ndim3",
    "v2_order_F_3d_blosc",
]

# The Go sentinel (package nd) each zarr-python exception class maps to.
GO_ERROR = {
    "BoundsCheckError": "out_of_bounds",
    "IndexError": "invalid_selection",
    "ValueError": "invalid_selection",
    "VindexInvalidSelectionError": "invalid_selection",
    "ArrayIndexError": "invalid_selection",
    "NegativeStepError": "invalid_selection",
}


# ---------------------------------------------------------------- specs


def s_int(i):
    return {"int": int(i)}


def s_slice(start=None, stop=None, step=None):
    return {"slice": [start, stop, step]}


def s_ints(v):
    return {"ints": [int(x) for x in v]}


def s_mask(m):
    return {"mask": "".join("1" if b else "0" for b in m)}


S_ELLIPSIS = {"ellipsis": True}


def to_py(item):
    """A selection item spec as the Python index object it stands for."""
    if "int" in item:
        return item["int"]
    if "slice" in item:
        return slice(*item["slice"])
    if "ints" in item:
        return np.array(item["ints"], dtype=np.int64)
    if "mask" in item:
        return np.array([c == "1" for c in item["mask"]], dtype=bool)
    if item.get("ellipsis"):
        return Ellipsis
    raise ValueError(item)


def bits(mask):
    return "".join("1" if b else "0" for b in np.ravel(mask))


# ---------------------------------------------------------------- numpy oracles


def expand(items, ndim):
    """Items with the Ellipsis expanded and missing trailing dims filled."""
    out = []
    for k, it in enumerate(items):
        if it is Ellipsis:
            fill = ndim - (len(items) - 1)
            out.extend([slice(None)] * max(fill, 0))
        else:
            out.append(it)
    if len(out) > ndim:
        raise IndexError("too many indices")
    out.extend([slice(None)] * (ndim - len(out)))
    return out


def np_oindex(full, items):
    """NumPy's np.ix_ meaning of an orthogonal selection."""
    items = expand(items, full.ndim)
    res = full
    for d in reversed(range(full.ndim)):
        it = items[d]
        n = full.shape[d]
        if isinstance(it, np.ndarray) and it.dtype == bool:
            if it.shape != (n,):
                raise IndexError("mask length")
            res = np.compress(it, res, axis=d)
        elif isinstance(it, np.ndarray):
            if np.any(it >= n) or np.any(it < -n):
                raise IndexError("out of bounds")
            res = np.take(res, it, axis=d)
        elif isinstance(it, slice):
            res = res[(slice(None),) * d + (it,)]
        else:
            if not -n <= it < n:
                raise IndexError("out of bounds")
            res = np.take(res, it, axis=d)
    return res


def block_slices(shape, items, grid_chunks):
    """The element slices a block selection stands for (Python clamping)."""
    sel = []
    for d, it in enumerate(expand(items, len(shape))):
        n, c = shape[d], grid_chunks[d]
        g = -(-n // c)
        if isinstance(it, slice):
            if it.step not in (None, 1):
                raise IndexError("step")
            start, stop, _ = it.indices(g)
            sel.append(slice(start * c, min(stop * c, n)))
        elif isinstance(it, int):
            b = it + g if it < 0 else it
            if not 0 <= b < g:
                raise IndexError("block out of bounds")
            sel.append(slice(b * c, min((b + 1) * c, n)))
        else:
            raise IndexError("unsupported")
    return tuple(sel)


def np_blocks(full, items, grid_chunks):
    return full[block_slices(full.shape, items, grid_chunks)]


def same(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if x.shape != y.shape or x.dtype.newbyteorder("=") != y.dtype.newbyteorder("="):
        return False
    if x.dtype.kind in "fc":
        return np.array_equal(x, y, equal_nan=True) and np.array_equal(
            np.signbit(np.real(x)), np.signbit(np.real(y))
        )
    return np.array_equal(x, y)


# ---------------------------------------------------------------- output


class Out:
    def __init__(self, outdir):
        self.outdir = outdir
        self.expdir = os.path.join(outdir, "expected")
        if os.path.isdir(self.expdir):
            shutil.rmtree(self.expdir)
        os.makedirs(self.expdir)
        self.cases = []
        self.bytes = 0

    def save(self, name, arr):
        arr = np.array(arr, order="C", copy=True)  # keeps 0-d results 0-d
        if arr.dtype.byteorder == ">":
            arr = arr.astype(arr.dtype.newbyteorder("<"))
        path = os.path.join(self.expdir, name)
        np.save(path, arr, allow_pickle=False)
        self.bytes += os.path.getsize(path)
        return "expected/" + name


def fname(array, tag):
    return array.replace("/", "__") + "." + tag + ".npy"


# ---------------------------------------------------------------- generators


class Gen:
    def __init__(self, name, a, full):
        self.name = name
        self.a = a
        self.full = full
        self.shape = list(a.shape)
        self.ndim = len(a.shape)
        self.chunks = list(a.chunks)  # read chunks (inner chunks when sharded)
        # blocks select along the metadata's chunk grid: shards when sharded
        cg = getattr(a.metadata, "chunk_grid", None)
        self.grid = list(cg.chunk_shape) if cg is not None else list(a.chunks)
        self.rng = np.random.default_rng(zlib.crc32(name.encode()))

    # random helpers
    def ints(self, d, k):
        """k indices of dim d in any order, with a repeat and negatives."""
        n = self.shape[d]
        if n == 0:
            return []
        v = self.rng.integers(-n, n, size=k)
        if k >= 3:
            v[-1] = v[0]  # a repeat
            v[1] = -1 - self.rng.integers(0, n)  # a negative
        return [int(x) for x in v]

    def mask(self, d, p=0.4):
        n = self.shape[d]
        m = self.rng.random(n) < p
        if n and not m.any():
            m[self.rng.integers(0, n)] = True
        return m

    def edge_ints(self, d):
        n, c = self.shape[d], self.chunks[d]
        v = [n - 1, c - 1, c, 0, -1, min(2 * c, n - 1), -(n % c or c)]
        return [x for x in v if -n <= x < n]

    def oindex_cases(self):
        nd_, sh = self.ndim, self.shape
        cs = []
        if nd_ == 0 or 0 in sh:
            cs.append(("empty ints", [s_ints([]) for _ in sh]))
            cs.append(("slices", [s_slice(None, None, 2) for _ in sh]))
            cs.append(("masks", [s_mask([False] * n) for n in sh]))
            cs.append(("negative step", [s_slice(None, None, -1) for _ in sh]))
            cs.append(("error: int out of bounds", [s_int(0)] + [s_slice() for _ in sh[1:]]))
            cs.append(("error: ints out of bounds", [s_ints([0])] + [s_slice() for _ in sh[1:]]))
            cs.append(("error: mask too long", [s_mask([True] * (sh[0] + 1))] + [s_slice() for _ in sh[1:]]))
            return cs
        cs.append(("ints every dim", [s_ints(self.ints(d, 6)) for d in range(nd_)]))
        cs.append(("ints every dim, longer", [s_ints(self.ints(d, 11 if nd_ < 3 else 5)) for d in range(nd_)]))
        cs.append(("chunk-edge ints", [s_ints(self.edge_ints(d)) for d in range(nd_)]))
        cs.append(("mask dim 0, steps", [s_mask(self.mask(0))] + [s_slice(1, None, 2) for _ in range(nd_ - 1)]))
        cs.append(("masks every dim", [s_mask(self.mask(d)) for d in range(nd_)]))
        for d in range(nd_):
            items = [s_ints(self.ints(e, 4)) for e in range(nd_)]
            items[d] = s_int(-1 - int(self.rng.integers(0, sh[d])) if d % 2 else int(self.rng.integers(0, sh[d])))
            cs.append((f"int at dim {d}, ints elsewhere", items))
            items = [s_slice(None, None, 3) for _ in range(nd_)]
            items[d] = s_mask(self.mask(d, 0.6))
            cs.append((f"mask at dim {d}, steps elsewhere", items))
        cs.append(("step slices", [s_slice(1, sh[d] - 1, 3) for d in range(nd_)]))
        cs.append(("negative step ::-1", [s_slice(None, None, -1)] + [s_ints(self.ints(d, 3)) for d in range(1, nd_)]))
        cs.append(("negative steps with bounds", [s_slice(sh[d] - 2, 1, -2 - d % 2) for d in range(nd_)]))
        cs.append(("negative step from start", [s_slice(min(5, sh[0] - 1), None, -2)] + [s_slice(None, 3, -1) for _ in range(1, nd_)]))
        cs.append(("empty ints dim 0", [s_ints([])] + [s_ints(self.ints(d, 3)) for d in range(1, nd_)]))
        cs.append(("all-false mask last dim", [s_slice(None, None, 2) for _ in range(nd_ - 1)] + [s_mask([False] * sh[-1])]))
        cs.append(("an int every dim", [s_int(int(self.rng.integers(-sh[d], sh[d]))) for d in range(nd_)]))
        cs.append(("ellipsis then ints", [S_ELLIPSIS, s_ints(self.ints(nd_ - 1, 5))]))
        cs.append(("ints then ellipsis", [s_ints(self.ints(0, 5)), S_ELLIPSIS]))
        cs.append(("one index array [-1]", [s_ints([-1]) for _ in range(nd_)]))
        cs.append(("dim 0 only", [s_ints(self.ints(0, 5))]))
        cs.append(("slice past the end", [s_slice(sh[0] - 2, sh[0] + 10)] + [s_ints(self.ints(d, 2)) for d in range(1, nd_)]))
        # errors
        n0, nl = sh[0], sh[-1]
        cs.append(("error: ints out of bounds", [s_ints([0, n0, 1])] + [s_slice() for _ in range(nd_ - 1)]))
        cs.append(("error: negative ints out of bounds", [s_slice() for _ in range(nd_ - 1)] + [s_ints([-nl - 1])]))
        cs.append(("error: int out of bounds", [s_int(n0)] + [s_slice() for _ in range(nd_ - 1)]))
        cs.append(("error: negative int out of bounds", [s_int(-n0 - 1)] + [s_slice() for _ in range(nd_ - 1)]))
        cs.append(("error: mask too short", [s_mask(self.mask(0)[:-1])] + [s_slice() for _ in range(nd_ - 1)]))
        cs.append(("error: mask too long", [s_slice() for _ in range(nd_ - 1)] + [s_mask(list(self.mask(nd_ - 1)) + [True])]))
        cs.append(("error: too many items", [s_int(0) for _ in range(nd_ + 1)]))
        return cs

    def vindex_cases(self):
        nd_, sh = self.ndim, self.shape
        cs = []
        empty = [[] for _ in range(nd_)]
        if nd_ == 0 or 0 in sh:
            cs.append(("empty arrays", empty))
            cs.append(("error: out of bounds", [[0] for _ in range(nd_)]))
            return cs
        cs.append(("points", [self.ints(d, 10) for d in range(nd_)]))
        cs.append(("many points", [self.ints(d, 40) for d in range(nd_)]))
        if nd_ >= 2:
            c = [self.ints(d, 8) for d in range(nd_)]
            c[0] = c[0][:1]
            cs.append(("broadcast dim 0 of length 1", c))
            c = [self.ints(d, 7) for d in range(nd_)]
            c[-1] = [-1]
            cs.append(("broadcast last dim of length 1", c))
        cs.append(("one point", [[int(self.rng.integers(-sh[d], sh[d]))] for d in range(nd_)]))
        cs.append(("empty arrays", empty))
        if nd_ >= 2:
            c = [[] for _ in range(nd_)]
            c[0] = [0]
            cs.append(("broadcast length 1 with length 0", c))
        # chunk corners: 0, c-1, c, n-1 in each dim, zipped (not a product)
        corners = []
        for d in range(nd_):
            n, ch = sh[d], self.chunks[d]
            v = [0, ch - 1, ch, n - 1, -1, n // 2]
            v = [x for x in v if -n <= x < n]
            corners.append(v)
        k = max(len(v) for v in corners)
        cs.append(("chunk corners", [[v[i % len(v)] for i in range(k)] for v in corners]))
        # errors
        if nd_ >= 2:
            cs.append(("error: lengths differ", [self.ints(d, 3 if d == 0 else 2) for d in range(nd_)]))
        c = [self.ints(d, 3) for d in range(nd_)]
        c[0][1] = sh[0]
        cs.append(("error: out of bounds", c))
        c = [self.ints(d, 3) for d in range(nd_)]
        c[-1][2] = -sh[-1] - 1
        cs.append(("error: negative out of bounds", c))
        if nd_ >= 2:
            cs.append(("error: fewer arrays than dims", [self.ints(d, 3) for d in range(nd_ - 1)]))
        cs.append(("error: more arrays than dims", [self.ints(d % nd_, 3) for d in range(nd_ + 1)]))
        return cs

    def vmask_cases(self):
        sh = self.shape
        size = int(np.prod(sh))
        cs = []
        p = min(0.3, 60.0 / max(size, 1))
        m = self.rng.random(sh) < p
        cs.append(("sparse mask", m, sh))
        m = self.rng.random(sh) < 0.5
        if size > 2000:
            m &= np.arange(size).reshape(sh) < 800
        cs.append(("half mask (first elements)", m, sh))
        cs.append(("all-false mask", np.zeros(sh, bool), sh))
        if size <= 1200:
            cs.append(("all-true mask", np.ones(sh, bool), sh))
        if self.ndim >= 1 and sh[0] > 0:
            ws = [sh[0] - 1] + sh[1:]
            cs.append(("error: mask of another shape", self.rng.random(ws) < 0.3, ws))
        return cs

    def blocks_cases(self):
        nd_, sh = self.ndim, self.shape
        g = [-(-n // c) for n, c in zip(sh, self.grid)]
        cs = []
        if nd_ == 0:
            return cs
        if 0 in sh:
            cs.append(("all", [s_slice() for _ in sh]))
            cs.append(("error: block out of bounds", [s_int(0) for _ in sh]))
            return cs
        cs.append(("first block", [s_int(0) for _ in range(nd_)]))
        cs.append(("last block (edge)", [s_int(-1) for _ in range(nd_)]))
        cs.append(("middle block", [s_int(gd // 2) for gd in g]))
        cs.append(("block ranges", [s_slice(min(1, gd - 1), min(3, gd)) for gd in g]))
        cs.append(("range to past the end", [s_slice(gd - 1, gd + 5) for gd in g]))
        cs.append(("negative range", [s_slice(-2, None) for gd in g]))
        cs.append(("empty block range", [s_slice(1, 1)] + [s_int(0) for _ in range(nd_ - 1)]))
        cs.append(("dim 0 only", [s_int(g[0] - 1)]))
        cs.append(("ellipsis then int", [S_ELLIPSIS, s_int(-1)]))
        cs.append(("error: block out of bounds", [s_int(g[0])] + [s_slice() for _ in range(nd_ - 1)]))
        cs.append(("error: negative block out of bounds", [s_slice() for _ in range(nd_ - 1)] + [s_int(-g[-1] - 1)]))
        cs.append(("error: step 2", [s_slice(None, None, 2)] + [s_slice() for _ in range(nd_ - 1)]))
        cs.append(("error: negative step", [s_slice() for _ in range(nd_ - 1)] + [s_slice(None, None, -1)]))
        cs.append(("start before the first block", [s_slice(-g[0] - 5, 1)] + [s_slice() for _ in range(nd_ - 1)]))
        cs.append(("error: index array", [s_ints([0])] + [s_slice() for _ in range(nd_ - 1)]))
        cs.append(("error: too many items", [s_int(0) for _ in range(nd_ + 1)]))
        return cs


def run(f):
    try:
        return np.asarray(f()), None
    except Exception as e:  # noqa: BLE001 - every zarr-python exception is data here
        return None, type(e).__name__


def record_read(out, g, mode, desc, spec, zf, nf):
    """Runs zarr-python (zf) and NumPy (nf), checks they agree, records a case."""
    k = sum(1 for c in out.cases if c["array"] == g.name and c["mode"] == mode)
    cid = f"{g.name}/{mode}/{k:02d}"
    case = {"id": cid, "array": g.name, "path": g.path, "mode": mode, "desc": desc}
    case.update(spec)
    zr, zerr = run(zf)
    nr, nerr = run(nf)
    if zerr is None:
        if nerr is None and not same(zr, nr):
            sys.exit(f"{cid}: zarr-python and numpy differ")
        if nerr is not None:
            print(f"note: {cid}: numpy raised {nerr}, zarr-python did not", file=sys.stderr)
        res, ref = zr, "zarr-python"
    elif nerr is None:
        # zarr-python 3.4 raises where NumPy's meaning is defined: negative
        # steps (NegativeStepError), an Ellipsis after an index array
        # (ValueError), masks or blocks of a zero-length dimension, block
        # slices starting before the first block (not clamped)
        print(f"note: {cid} ({desc}): zarr-python raised {zerr}, numpy did not", file=sys.stderr)
        res, ref = nr, "numpy"
        case["zarr_python_error"] = zerr
    else:
        if not desc.startswith("error:"):
            print(f"note: {cid} ({desc}): zarr-python raised {zerr}", file=sys.stderr)
        case["error"] = zerr
        case["go_error"] = GO_ERROR.get(zerr, "invalid_selection")
        out.cases.append(case)
        return
    if desc.startswith("error:"):
        print(f"note: {cid} ({desc}): no error from {ref}", file=sys.stderr)
    case["reference"] = ref
    case["shape"] = list(res.shape)
    case["expected"] = out.save(fname(g.name, f"{mode}.{k:02d}"), res)
    out.cases.append(case)


def read_cases(out, name, c):
    a = zarr.open_array(os.path.join(out.refdir, c["path"]), mode="r")
    full = a[:]
    want = np.load(os.path.join(out.refdir, c["expected"]))
    if not same(full, want):
        sys.exit(f"{name}: zarr-python read differs from the corpus .npy")
    g = Gen(name, a, full)
    g.path = c["path"]
    for desc, items in g.oindex_cases():
        py = tuple(to_py(i) for i in items)
        record_read(out, g, "oindex", desc, {"selection": items},
                    lambda: a.oindex[py], lambda: np_oindex(full, list(py)))
    for desc, coords in g.vindex_cases():
        py = tuple(np.array(v, dtype=np.int64) for v in coords)

        def nf(py=py):
            if len(py) != full.ndim:
                raise IndexError("arity")
            return full[py]
        record_read(out, g, "vindex", desc, {"coords": coords},
                    lambda: a.vindex[py], nf)
    for desc, m, mshape in g.vmask_cases():
        m = np.asarray(m, dtype=bool).reshape(mshape)
        record_read(out, g, "vmask", desc, {"mask": bits(m), "mask_shape": list(mshape)},
                    lambda: a.vindex[m], lambda: full[m])
    for desc, items in g.blocks_cases():
        py = tuple(to_py(i) for i in items)
        record_read(out, g, "blocks", desc, {"selection": items, "block_grid": g.grid},
                    lambda: a.blocks[py], lambda: np_blocks(full, list(py), g.grid))


# ---------------------------------------------------------------- writes


def rand_values(rng, dtype, shape):
    dt = np.dtype(dtype).newbyteorder("<") if np.dtype(dtype).byteorder == ">" else np.dtype(dtype)
    if dt.kind == "b":
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, size=shape, endpoint=True, dtype=dt)
    if dt.kind == "f":
        return (rng.standard_normal(shape) * 100).astype(dt)
    if dt.kind == "c":
        return (rng.standard_normal(shape) * 100 + 1j * rng.standard_normal(shape) * 100).astype(dt)
    raise ValueError(dt)


def oindex_lists(shape, items):
    """Per dimension, the indices an orthogonal write selection lists (an
    integer as a list of one, negatives as they are)."""
    idx = []
    for d, it in enumerate(expand([to_py(i) for i in items], len(shape))):
        if isinstance(it, slice):
            idx.append(np.arange(shape[d])[it])
        elif isinstance(it, np.ndarray) and it.dtype == bool:
            idx.append(np.nonzero(it)[0])
        else:
            idx.append(np.atleast_1d(np.asarray(it, dtype=np.int64)))
    return idx


def np_write(full, w):
    """Applies one write spec to a NumPy array element by element, in the
    order of the selection: the last write wins."""
    vals = w["_values"]
    if w["mode"] == "oindex":
        idx = oindex_lists(full.shape, w["selection"])
        v = vals.reshape([len(i) for i in idx])
        for pos in np.ndindex(*v.shape):
            full[tuple(int(idx[d][pos[d]]) for d in range(full.ndim))] = v[pos]
    elif w["mode"] == "vindex":
        coords = np.broadcast_arrays(*[np.array(c, dtype=np.int64) for c in w["coords"]])
        for k in range(coords[0].shape[0]):
            full[tuple(int(c[k]) for c in coords)] = vals[k]
    elif w["mode"] == "vmask":
        m = np.array([c == "1" for c in w["mask"]]).reshape(full.shape)
        full[m] = vals
    elif w["mode"] == "blocks":
        full[w["_npsel"]] = vals


def np_assign(full, w):
    """Applies one write spec with NumPy's own indexing assignment."""
    vals = w["_values"]
    if w["mode"] == "oindex":
        idx = oindex_lists(full.shape, w["selection"])
        full[np.ix_(*idx)] = vals.reshape([len(i) for i in idx])
    elif w["mode"] == "vindex":
        full[tuple(np.array(c, dtype=np.int64) for c in w["coords"])] = vals
    else:
        np_write(full, w)


def zarr_write(a, w):
    vals = w["_values"]
    if w["mode"] == "oindex":
        a.oindex[tuple(to_py(i) for i in w["selection"])] = vals
    elif w["mode"] == "vindex":
        a.vindex[tuple(np.array(c, dtype=np.int64) for c in w["coords"])] = vals
    elif w["mode"] == "vmask":
        a.vindex[np.array([c == "1" for c in w["mask"]]).reshape(w.get("mask_shape", a.shape))] = vals
    elif w["mode"] == "blocks":
        a.blocks[tuple(to_py(i) for i in w["selection"])] = vals


def on_copy(src, writes):
    """Applies writes with zarr-python to a copy of the array at src; returns
    the array's contents after them (or after the one refused) and the class
    name of the exception that refused a write, if any."""
    tmp = tempfile.mkdtemp(prefix="selw")
    try:
        dst = os.path.join(tmp, "a.zarr")
        shutil.copytree(src, dst)
        a = zarr.open_array(dst, mode="r+")
        zerr = None
        try:
            for w in writes:
                zarr_write(a, w)
        except Exception as e:  # noqa: BLE001 - every zarr-python exception is data here
            zerr = type(e).__name__
        return zarr.open_array(dst, mode="r")[:], zerr
    finally:
        shutil.rmtree(tmp)


def write_cases(out, name, c):
    src = os.path.join(out.refdir, c["path"])
    a0 = zarr.open_array(src, mode="r")
    full0 = a0[:]
    g = Gen(name + "#write", a0, full0)
    sh, nd_ = g.shape, g.ndim
    dt = full0.dtype
    grid = g.grid

    def ow(items):
        res = np_oindex(full0, [to_py(i) for i in items])
        return {"mode": "oindex", "selection": items, "_shape": res.shape}

    def vw(coords):
        n = np.broadcast_shapes(*[(len(v),) for v in coords])
        return {"mode": "vindex", "coords": coords, "_shape": n}

    def mw(m):
        return {"mode": "vmask", "mask": bits(m), "_shape": (int(m.sum()),)}

    def bw(items):
        sel = block_slices(sh, [to_py(i) for i in items], grid)
        return {"mode": "blocks", "selection": items, "block_grid": grid,
                "_shape": full0[sel].shape, "_npsel": sel}

    def rep(d, k):
        """k ≤ 8 indices of dim d with repeats (the same element twice, also
        through a negative alias)."""
        n = sh[d]
        v = [int(x) for x in g.rng.integers(0, n, size=k)]
        v[1] = v[0]
        v[-1] = v[0] - n  # negative alias of v[0]
        return v

    specs = []
    specs.append(("oindex, repeated ints", [ow([s_ints(rep(0, 6))] + [s_slice(None, None, 2) for _ in range(nd_ - 1)])]))
    specs.append(("oindex, ints and mask", [ow([s_ints(rep(d, 5)) for d in range(nd_ - 1)] + [s_mask(g.mask(nd_ - 1))])]))
    specs.append(("oindex, negative step", [ow([s_slice(None, None, -1)] + [s_slice(sh[d] - 1, 0, -3) for d in range(1, nd_)])]))
    pts = [[int(x) for x in g.rng.integers(0, sh[d], size=8)] for d in range(nd_)]
    for d in range(nd_):
        pts[d][3] = pts[d][0]
        pts[d][6] = pts[d][0] - sh[d]
    specs.append(("vindex, repeated points", [vw(pts)]))
    b = [[int(x) for x in g.rng.integers(-sh[d], sh[d], size=6)] for d in range(nd_)]
    b[0] = b[0][:1]
    specs.append(("vindex, broadcast", [vw(b)]))
    specs.append(("mask write", [mw(g.rng.random(sh) < 0.3)]))
    specs.append(("block write", [bw([s_int(-1)] + [s_slice(0, 1) for _ in range(nd_ - 1)])]))
    specs.append(("sequence: oindex, vindex, mask, blocks", [
        ow([s_ints(g.ints(d, 4)) for d in range(nd_)]),
        vw([g.ints(d, 6) for d in range(nd_)]),
        mw(g.rng.random(sh) < 0.2),
        bw([s_int(0) for _ in range(nd_)]),
    ]))
    many = min(300, max(60, int(np.prod(sh)) // 2))
    specs.append(("vindex, heavy repeats", [vw([[int(x) for x in g.rng.integers(-sh[d], sh[d], size=many)] for d in range(nd_)])]))
    specs.append(("oindex, heavy repeats", [ow([s_ints([int(x) for x in g.rng.integers(-sh[d], sh[d], size=min(2 * sh[d], 40 if nd_ < 3 else 12))]) for d in range(nd_)])]))

    for k, (desc, writes) in enumerate(specs):
        cid = f"{name}/write/{k:02d}"
        for j, w in enumerate(writes):
            w["_values"] = rand_values(g.rng, dt, w["_shape"])
            w["values"] = out.save(fname(name, f"write.{k:02d}.values{j}"), w["_values"])
        want = full0.copy()
        for w in writes:
            np_write(want, w)
        check = full0.copy()  # NumPy's own assignment must agree (last wins)
        for w in writes:
            np_assign(check, w)
        if not same(check, want):
            sys.exit(f"{cid}: element-by-element writes differ from NumPy's assignment")
        zres, zerr = on_copy(src, writes)
        case = {"id": cid, "array": name, "path": c["path"], "mode": "write", "desc": desc,
                "writes": [{k2: v for k2, v in w.items() if not k2.startswith("_")} for w in writes],
                "shape": list(want.shape), "reference": "numpy"}
        if zerr is not None:
            case["zarr_python_error"] = zerr
        else:
            # What zarr-python wrote where it disagrees is not kept: with repeated indices its
            # result depends on the order its threads finish (an unstable sort), so a file of
            # it would change from run to run and rerunning this script would dirty the clone.
            case["zarr_python_agrees"] = bool(same(zres, want))
        case["expected"] = out.save(fname(name, f"write.{k:02d}"), want)
        out.cases.append(case)

    # writes zarr-python refuses: the array must be left as it was
    def loose_shape(items):
        shp = []
        for d, it in enumerate(expand([to_py(i) for i in items], nd_)):
            if isinstance(it, slice):
                shp.append(len(range(sh[d])[it]))
            elif isinstance(it, np.ndarray):
                shp.append(int(it.sum()) if it.dtype == bool else len(it))
        return tuple(shp)

    n0 = sh[0]
    errs = [
        ("error: oindex ints out of bounds", {"mode": "oindex", "selection": [s_ints([0, n0, 1])] + [s_slice() for _ in range(nd_ - 1)]}),
        ("error: oindex mask too short", {"mode": "oindex", "selection": [s_mask(g.mask(0)[:-1])] + [s_slice() for _ in range(nd_ - 1)]}),
        ("error: vindex out of bounds", {"mode": "vindex", "coords": [[0, 1, -sh[d] - 1 if d else sh[d]] for d in range(nd_)]}),
        ("error: vindex lengths differ", {"mode": "vindex", "coords": [[0, 1, 2][: 3 - (d > 0)] for d in range(nd_)]}),
        ("error: mask of another shape", {"mode": "vmask", "mask_shape": [n0 - 1] + sh[1:]}),
        ("error: block out of bounds", {"mode": "blocks", "selection": [s_int(-(-n0 // grid[0]))] + [s_slice() for _ in range(nd_ - 1)], "block_grid": grid}),
    ]
    for k, (desc, w) in enumerate(errs, start=len(specs)):
        cid = f"{name}/write/{k:02d}"
        if w["mode"] in ("oindex", "blocks"):
            shp = loose_shape(w["selection"]) if w["mode"] == "oindex" else tuple(grid[:1]) + tuple(sh[1:])
        elif w["mode"] == "vindex":
            shp = (max(len(v) for v in w["coords"]),)
        else:
            m = g.rng.random(w["mask_shape"]) < 0.3
            w["mask"] = bits(m)
            shp = (int(m.sum()),)
        w["_values"] = rand_values(g.rng, dt, shp)
        w["values"] = out.save(fname(name, f"write.{k:02d}.values0"), w["_values"])
        zres, zerr = on_copy(src, [w])
        unchanged = same(zres, full0)
        if zerr is None or not unchanged:
            sys.exit(f"{cid} ({desc}): zarr-python error {zerr}, array unchanged: {unchanged}")
        out.cases.append({"id": cid, "array": name, "path": c["path"], "mode": "write", "desc": desc,
                          "writes": [{k2: v for k2, v in w.items() if not k2.startswith("_")}],
                          "error": zerr, "go_error": GO_ERROR.get(zerr, "invalid_selection"),
                          "unchanged": True})


# ---------------------------------------------------------------- NumPy spellings
#
# NumPy's own results for selection texts spelled as a user types them
# (what stands between a[ and ]), enumerated per rank 1-4 from a seeded
# generator: integers (negative, out of bounds), slices (steps, negative
# steps, clamped bounds), Ellipsis, None, scalar booleans, index arrays of
# any rank that broadcast (or do not), lists spelled as tuples, boolean
# masks (1-D and N-D), empty and repeated indices, arrays next to or
# separated by slices (NumPy then puts the broadcast dimensions first),
# too many indices, and whole texts that are one list (a[[...]]: NumPy
# makes one array of it, and raises when it nests unevenly). Each case has
# NumPy's result (shape, values of np.arange(n).reshape(shape)) or its
# exception; and, where every array is 1-D, the orthogonal meaning
# (zarr-python's oindex: np.ix_ with slices as ranges, integers dropping
# their dimension), checked against zarr-python's oindex where it answers.
# Written to OUTDIR/numpy_spellings.json, read by
# zarr/numpy_spellings_test.go.


SPELLING_SHAPES = [(7,), (0,), (5, 6), (4, 1), (3, 4, 5), (2, 0, 3), (2, 3, 4, 5), (3, 1, 2, 4), ()]  # SPELLING_FOUND's too
SPELLING_KINDS = ["basic", "negative", "slices", "pointwise", "broadcast", "orthogonal", "mixed",
                  "separated", "mask", "empty", "repeated", "bounds", "newaxis", "whole", "tuple", "ragged",
                  "random", "ellipsis", "literals"]
SPELLINGS_PER = {"random": 40, "literals": 12}  # cases per shape and kind (else 4), before duplicates are dropped


def sp_list(v, tuples=False):
    """Nested Python sequences written as text: lists, or tuples."""
    if isinstance(v, (list, tuple)):
        if tuples:
            if len(v) == 1:
                return "(" + sp_list(v[0], tuples) + ",)"
            return "(" + ", ".join(sp_list(x, tuples) for x in v) + ")"
        return "[" + ", ".join(sp_list(x, tuples) for x in v) + "]"
    if isinstance(v, (bool, np.bool_)):
        return "True" if v else "False"
    return str(int(v))


class Spell:
    """Random selection items as text, for one array shape."""

    def __init__(self, rng, shape):
        self.rng, self.shape = rng, shape

    def idx(self, n, neg=True, oob=False):
        r = self.rng
        if oob:
            return r.choice([n, n + 1, -n - 1, -n - 3])
        if n == 0:
            return 0  # out of bounds whatever it is
        return r.randrange(-n if neg else 0, n)

    def int_item(self, n, **kw):
        return str(self.idx(n, **kw))

    def slice_item(self, n, neg_step=None):
        r = self.rng
        bound = lambda: r.choice([None, None, r.randrange(-n - 2, n + 3)])
        start, stop = bound(), bound()
        step = r.choice([None, 1, 2, 3, -1, -2, -3])
        if neg_step:
            step = r.choice([-1, -2, -3])
        parts = ["" if start is None else str(start), "" if stop is None else str(stop)]
        s = ":".join(parts)
        if step is not None:
            s += ":" + str(step)
        return s

    def array(self, n, shape, neg=True, oob=False, repeat=False):
        """An index array of the given shape for a dimension of length n."""
        r = self.rng
        size = int(np.prod(shape)) if shape else 1
        vals = [self.idx(n, neg=neg) for _ in range(size)]
        if repeat and size > 1:
            vals[r.randrange(size)] = vals[0]
        if oob and size:
            vals[r.randrange(size)] = self.idx(n, oob=True)
        return np.array(vals, dtype=np.int64).reshape(shape).tolist()

    def mask(self, shape, wrong=False):
        r = self.rng
        shape = list(shape)
        if wrong and shape:
            k = r.randrange(len(shape))
            shape[k] = shape[k] + r.choice([-1, 1]) if shape[k] > 0 else 1
        vals = [r.random() < 0.5 for _ in range(int(np.prod(shape)))]
        return np.array(vals, dtype=bool).reshape(shape).tolist()

    def bshapes(self, k, ok=True):
        """k array shapes that broadcast together (or, not ok, do not)."""
        r = self.rng
        rank = r.choice([1, 1, 2, 2, 3])
        base = [r.choice([1, 2, 3]) for _ in range(rank)]
        out = []
        for _ in range(k):
            s = [d if r.random() < 0.7 else 1 for d in base]
            s = s[r.randrange(len(s)):] if r.random() < 0.3 else s
            out.append(tuple(s) or (1,))
        if not ok:
            s = list(out[-1])
            s[-1] = max(base[-1], 1) + r.choice([1, 2])
            if base[-1] == 1 and len(out) > 1 and out[0][-1] == 1:
                out[0] = out[0][:-1] + (2,)
            out[-1] = tuple(s)
        return out

    def text(self, kind):
        """A selection text of the kind, and whether to spell arrays as tuples."""
        r, shape = self.rng, self.shape
        nd_ = len(shape)
        dims = list(range(nd_))
        lit = lambda v: sp_list(v, tuples=(kind == "tuple" or r.random() < 0.1))
        items = []
        if kind == "basic":
            for d in dims[: r.randint(0, nd_)]:
                items.append(r.choice([self.int_item(shape[d], neg=False) if shape[d] else ":", self.slice_item(shape[d]), ":"]))
            if r.random() < 0.4:
                items.insert(r.randint(0, len(items)), "...")
        elif kind == "negative":
            for d in dims[: r.randint(1, nd_)]:
                n = shape[d]
                items.append(r.choice([str(-r.randint(1, n)) if n else "::-1", self.slice_item(n, neg_step=True),
                                       lit(self.array(n, (r.randint(1, 3),))) if n else "[]"]))
        elif kind == "slices":
            items = [self.slice_item(shape[d]) for d in dims]
            if r.random() < 0.2:
                items[r.randrange(nd_)] = r.choice(["::0", "1:2:0"])  # ValueError
        elif kind in ("pointwise", "broadcast", "repeated"):
            k = r.randint(1, nd_)
            ok = kind != "broadcast" or r.random() < 0.6
            shapes = [(r.randint(1, 4),)] * k if kind != "broadcast" else self.bshapes(k, ok)
            for d in dims[:k]:
                items.append(lit(self.array(shape[d], shapes[dims.index(d)], repeat=kind == "repeated")) if shape[d] else "[]")
            if k < nd_ and r.random() < 0.5:
                items.append(r.choice([":", "...", self.slice_item(shape[k])]))
        elif kind == "orthogonal":
            k = r.randrange(nd_)
            for d in dims:
                if d == k:
                    items.append(lit(self.array(shape[d], (r.randint(0, 4),))) if shape[d] else "[]")
                else:
                    items.append(r.choice([":", self.slice_item(shape[d])]))
        elif kind in ("mixed", "separated"):
            if nd_ < 2:
                items = [lit(self.array(shape[0], (2,))) if shape[0] else "[]", r.choice(["...", ":"])]
            else:
                arr_dims = sorted(r.sample(dims, min(nd_, r.randint(2, 3))))
                if kind == "separated" and arr_dims[-1] - arr_dims[0] == len(arr_dims) - 1 and nd_ >= 3:
                    arr_dims = [0, nd_ - 1]
                shapes = self.bshapes(len(arr_dims))
                for d in dims:
                    n = shape[d]
                    if d in arr_dims:
                        s = shapes[arr_dims.index(d)]
                        items.append(lit(self.array(n, s)) if n else "[]")
                    elif kind == "separated" or r.random() < 0.5:
                        items.append(r.choice([":", self.slice_item(n), self.int_item(n) if n else ":"]))
                    else:
                        items.append(self.int_item(n) if n else ":")
        elif kind == "mask":
            d0 = r.randrange(nd_)
            span = r.randint(1, nd_ - d0)
            wrong = r.random() < 0.2
            items = [":"] * d0 + [lit(self.mask(shape[d0:d0 + span], wrong))]
            if r.random() < 0.5 and d0 + span < nd_:
                items.append(r.choice([":", lit(self.array(shape[d0 + span], (r.randint(1, 2),))) if shape[d0 + span] else "[]",
                                       self.int_item(shape[d0 + span]) if shape[d0 + span] else ":"]))
            if r.random() < 0.3:
                items.insert(0, "...") if d0 == 0 and span == nd_ else items.append("...")
        elif kind == "empty":
            d0 = r.randrange(nd_)
            items = [":"] * d0 + [r.choice(["[]", "()", "[[]]", "[[], []]", "1:1", "::-1" if shape[d0] == 0 else "-1:0"])]
            if r.random() < 0.5 and d0 + 1 < nd_:
                items.append(r.choice([lit(self.array(shape[d0 + 1], (1,))) if shape[d0 + 1] else "[]", ":", "[]"]))
        elif kind == "bounds":
            d0 = r.randrange(nd_)
            items = [":"] * d0 + [r.choice([self.int_item(shape[d0], oob=True),
                                            lit(self.array(shape[d0], (r.randint(1, 3),), oob=True))])]
            if r.random() < 0.3:
                items = [self.int_item(max(1, shape[0]), neg=False)] * (nd_ + 1)  # too many indices
        elif kind == "newaxis":
            items = [r.choice([":", self.int_item(shape[d]) if shape[d] else ":",
                               lit(self.array(shape[d], (2,))) if shape[d] else "[]"]) for d in dims[: r.randint(0, nd_)]]
            for _ in range(r.randint(1, 2)):
                items.insert(r.randint(0, len(items)), r.choice(["None", "None", "np.newaxis", "True", "False"]))
            if r.random() < 0.3:
                items.insert(r.randint(0, len(items)), "...")
        elif kind == "whole":
            # One list alone: NumPy's a[[...]], one array.
            n = shape[0]
            v = r.choice([self.array(n, (r.randint(0, 4),)) if n else [], self.array(n, (2, 2)) if n else [[]],
                          self.mask(shape[: r.randint(1, nd_)]), [self.array(n, (1,)) if n else [], 1 % max(n, 1)]])
            return sp_list(v, tuples=False) + r.choice(["", "", ","])
        elif kind == "tuple":
            k = r.randint(1, nd_)
            items = [lit(self.array(shape[d], (r.randint(1, 3),))) if shape[d] else "()" for d in dims[:k]]
            if r.random() < 0.4:
                return "(" + ", ".join(items) + ")"  # a tuple alone is the subscript
        elif kind == "ragged":
            n = max(shape[0], 1)
            return r.choice(["[[0], 1]", "[(0, 1), 2]", "[[0], [1, %d]]" % (n - 1), "[[[0], [0]], [0, 0]]",
                             "[[0, 1], [0]], :", "[..., 0]", "[None, 0]", "[0, None]", "[[0], None]",
                             "[0, 1.5]", "1.5", "0, 1.5:", "[0]:1", "[[0, 0], (0,)]", "[(0, 0), (0, 0)]"])
        elif kind == "random":
            # Anything anywhere: arrays of shapes that broadcast (or do
            # not) among integers, slices, masks, None, booleans, Ellipsis.
            k = r.randint(1, nd_ + 1)
            shapes = self.bshapes(k, ok=r.random() < 0.85)
            ellipsis = False
            for j in range(k):
                d = min(j, nd_ - 1)
                n = shape[d]
                choice = r.choice(["int", "int", "slice", "slice", "array", "array", "array", "mask",
                                   "none", "bool", "ellipsis"])
                if choice == "ellipsis" and not ellipsis:
                    ellipsis = True
                    items.append("...")
                elif choice == "int" and n:
                    items.append(self.int_item(n))
                elif choice == "array":
                    items.append(lit(self.array(n, shapes[j])) if n else "[]")
                elif choice == "mask":
                    items.append(lit(self.mask((n,))))
                elif choice == "none":
                    items.append("None")
                elif choice == "bool":
                    items.append(r.choice(["True", "False"]))
                else:
                    items.append(self.slice_item(n))
        elif kind == "ellipsis":
            # Advanced items around an Ellipsis that may stand for no
            # dimension: NumPy reads the items as written, so it still
            # separates them.
            items = [r.choice([self.int_item(shape[d]) if shape[d] else ":", lit(self.array(shape[d], (2,))) if shape[d] else "[]",
                               ":", self.slice_item(shape[d])]) for d in dims]
            if r.random() < 0.5:
                del items[r.randrange(nd_)]
            items.insert(r.randint(0, len(items)), "...")
        elif kind == "literals":
            # Python's spellings of integers: hexadecimal, octal, binary,
            # underscores, unary -, + and ~, booleans as integers; and
            # what Python refuses (leading zeros, misplaced underscores).
            def spell(i):
                forms = [str(i), hex(i), oct(i), bin(i), "~%d" % ~i, "-(%d)" % -i, "+%d" % i, "- %d" % -i,
                         "-" * 2 + str(i), str(i).replace("", "_").strip("_").replace("-_", "-") if abs(i) >= 10 else str(i)]
                if i in (0, 1):
                    forms += ["+True" if i else "+False", "-True" if i == -1 else "~False" if i == -1 else str(i)]
                if r.random() < 0.03:
                    forms = ["0%d" % abs(i) if i else "01", "%d_" % i, "1__0"]
                return r.choice(forms)
            for d in dims:
                n = shape[d]
                if not n:
                    items.append(":")
                    continue
                choice = r.choice(["int", "int", "array", "slice"])
                if choice == "int":
                    items.append(spell(self.idx(n)))
                elif choice == "array":
                    items.append("[" + ", ".join(spell(self.idx(n)) for _ in range(r.randint(1, 3))) + "]")
                else:
                    items.append(spell(self.idx(n)) + ":" + spell(self.idx(n)) + ":" + spell(r.choice([-2, -1, 1, 2, 3])))
        text = ", ".join(items)
        if kind not in ("ragged",) and r.random() < 0.15:
            text += ","
        return text


# Cases that once disagreed with NumPy (kept whatever the generator makes).
SPELLING_FOUND = [
    ((2, 3, 4, 5), "None, None, :, :, (-3, 1), ..., [-2, 2]"),  # an Ellipsis of no dimension separates
    ((3, 4, 5), ":, [0, 1], ..., [0, 1]"),
    ((3, 4, 5), ":, 1, ..., [0, 1]"),
    ((3, 4, 5), "[0, 1], ..., [0, 1], :"),
    # Lists NumPy makes one array of (and raises on when they nest
    # unevenly), tuples as sequences.
    ((5, 6), "[[0], 1]"),
    ((5, 6), "[[[0], [2]], [1, 3]]"),
    ((5, 6), "[[0], [2]], [1, 3]"),
    ((5, 6), "[(0, 1), 2]"),
    ((5, 6), "(0, 1), 2"),
    ((5, 6), "[(0, 1), (2, 3)]"),
    ((5, 6), "((0, 1), (2, 3))"),
    ((5, 6), "[[True, False, True, False, True], ...]"),
    ((5, 6), "[[], 1]"),
    ((5, 6), "(), 0"),
    ((5, 6), "[()]"),
    # An empty broadcast takes no point: its arrays' bounds go unchecked
    # (its integers' do not).
    ((2, 0, 3), "False, ::-2, [[-2]], (False, False, True)"),
    ((2, 0, 3), ":, [[-2]], [2]"),
    ((2, 0, 3), ":, [-2], []"),
    ((5, 6), "[], [7]"),
    ((5, 6), "[[]], [[7], [8]]"),
    ((5, 6), "False, [7]"),
    ((5, 6), "[7], False"),
    ((5, 6), "False, 9"),
    ((5, 6), "[9], 9, False"),
    ((5, 6), "[False, False, False, False, False], [7]"),
    ((5, 6), "[True, False, False, False, False], [7]"),
    ((5, 6), ":, [7], False"),
    ((5, 6), "[], 9"),
    # Python's integer literals and unary operators.
    ((7,), "~0"),
    ((7,), "0x5"),
    ((7,), "1_0"),
    ((7,), "--1"),
    ((7,), "-True"),
    ((7,), "[~0, 0b1, 0o5, -(2)]"),
    ((7,), "~0:-(7):-2"),
    ((7,), "007"),
    ((7,), "-[1]"),
    # Slice bounds are read as NumPy walks the dimensions: after the count
    # of indices and the arrays' shapes, before a later integer's bounds.
    ((7,), "0, 1.5:"),
    ((5, 6), "1.5:, 9"),
    ((5, 6), "9, 1.5:"),
    ((5, 6), "1.5:, [9]"),
    ((5, 6), "1.5:, 0, 0"),
    ((5, 6), "1.5:, [True]"),
    ((5, 6), "::0, 9"),
    ((5, 6), "9, ::0"),
    ((5, 6), "::0, [9]"),
    ((5, 6), "1.5:, ::0"),
    ((5, 6), "::0, 1.5:"),
    ((5, 6), "[[0], 1], ::0"),
    ((5, 6), "1.5:, ..., ..."),
    ((5, 6), "1:2:1.5, [0, 9]"),
    ((5, 6), "9, [True]"),
    ((5, 6), "[True], 9"),
    ((5, 6), "9, [[0], 1]"),
    ((5, 6), "9, [True, False, True, False, True, False]"),
    # A 0-d array: only what takes no dimension.
    ((), "()"),
    ((), "..."),
    ((), "None"),
    ((), "..., None"),
    ((), "True"),
    ((), "False"),
    ((), "0"),
    ((), "[0]"),
    ((), "[]"),
    ((), ":"),
    ((), "[True]"),
    ((), "None, [0]"),
    ((7,), "[...]"),
    ((7,), "((0, 1))"),
    ((7,), "((0, 1),)"),
]


def np_ix_oindex(a, items):
    """a.oindex[items] by NumPy: np.ix_ of every dimension's indices."""
    if not isinstance(items, tuple):
        items = (items,)
    if sum(it is Ellipsis for it in items) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if any(isinstance(it, (bool, np.bool_)) or it is None for it in items):
        # zarr-python's oindex takes no new axis, whatever else is wrong.
        raise IndexError("a new axis in an orthogonal selection")
    if any(it is Ellipsis for it in items):
        k = next(i for i, it in enumerate(items) if it is Ellipsis)
        items = items[:k] + (slice(None),) * (a.ndim - len(items) + 1) + items[k + 1:]
    if len(items) > a.ndim:
        raise IndexError("too many indices for array")
    items = items + (slice(None),) * (a.ndim - len(items))
    lists, drop = [], []
    for d, it in enumerate(items):
        n = a.shape[d]
        if isinstance(it, slice):
            lists.append(np.arange(n)[it])
        elif isinstance(it, (bool, np.bool_)) or it is None:
            raise IndexError("a new axis in an orthogonal selection")
        elif isinstance(it, int):
            if not -n <= it < n:
                raise IndexError(f"index {it} is out of bounds for axis {d} with size {n}")
            lists.append(np.array([it % n]))
            drop.append(d)
        else:
            v = np.asarray(it)
            if v.ndim != 1:
                raise IndexError("arrays in an orthogonal selection must be 1-dimensional only")
            if v.size == 0:
                v = v.astype(np.int64)
            if v.dtype.kind not in "biu":
                raise IndexError("only integer or boolean arrays")
            if v.dtype == bool:
                if v.shape != (n,):
                    raise IndexError(f"boolean index did not match axis {d}")
                v = np.nonzero(v)[0]
            else:
                if v.size and (v.min() < -n or v.max() >= n):
                    raise IndexError(f"index out of bounds for axis {d} with size {n}")
                v = v % n if n else v
            lists.append(v)
    r = a[np.ix_(*lists)]
    return r.reshape([s for d, s in enumerate(r.shape) if d not in drop])


def zarr_oindex(z, items):
    """zarr-python's z.oindex[items], sequences as NumPy arrays."""
    if not isinstance(items, tuple):
        items = (items,)
    conv = tuple(np.asarray(it) if isinstance(it, (list, tuple)) else it for it in items)
    return np.asarray(z.oindex[conv])


def error_of(e):
    msg = str(e)
    return {"error": type(e).__name__, "message": msg.split("\n")[0][:300],
            "sentinel": "ErrOutOfBounds" if "out of bounds" in msg else "ErrInvalidSelection"}


def spelling_case(a, z, kind, text):
    """NumPy's result of a[text] (or its exception), and the orthogonal
    meaning where text has an index array or mask; the second value says
    whether zarr-python's z.oindex agrees with it (None: no such meaning)."""
    c = {"shape": list(a.shape), "kind": kind, "text": text}
    env = {"a": a, "np": np}
    try:
        r = np.asarray(eval(f"a[{text}]", env))
        c["result_shape"] = list(r.shape)
        c["values"] = [int(v) for v in r.ravel()]
    except Exception as e:
        c.update(error_of(e))
    try:
        items = eval(f"np.s_[{text}]", env)
    except Exception:
        return c, None
    flat = items if isinstance(items, tuple) else (items,)
    if not any(isinstance(it, (list, tuple)) for it in flat) or c.get("error") == "ValueError":
        return c, None
    try:
        o = np_ix_oindex(a, items)
        c["oindex_shape"] = list(o.shape)
        c["oindex_values"] = [int(v) for v in o.ravel()]
    except Exception as e:
        c["oindex_error"] = type(e).__name__
        c["oindex_sentinel"] = error_of(e)["sentinel"]
    try:
        zo = zarr_oindex(z, items)
    except Exception:
        agree = "oindex_error" in c
    else:
        agree = "oindex_shape" in c and (list(zo.shape), [int(v) for v in zo.ravel()]) == (c["oindex_shape"], c["oindex_values"])
    c["zarr_python_oindex_agrees"] = agree
    return c, agree


def spelling_cases(outdir):
    rng = random.Random(27)
    cases, seen = [], set()
    disagree = 0
    for shape in SPELLING_SHAPES:
        a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
        z = zarr.create_array(store=zarr.storage.MemoryStore(), shape=shape, dtype="int64",
                              chunks=tuple(max(1, n // 2) for n in shape))
        z[...] = a
        sp = Spell(rng, shape)
        todo = [("found", t) for s, t in SPELLING_FOUND if s == shape]
        for kind in SPELLING_KINDS if shape else []:
            todo += [(kind, None)] * SPELLINGS_PER.get(kind, 4)
        for kind, text in todo:
            if text is None:
                text = sp.text(kind)
            if text.strip() == "" or (shape, text) in seen:
                continue  # "" is gozarr's (Python reads no a[])
            seen.add((shape, text))
            c, agree = spelling_case(a, z, kind, text)
            disagree += agree is False
            cases.append(c)
    doc = {"generator": "testdata/selections/make_selections.py (spelling_cases)",
           "numpy": np.__version__, "zarr-python": zarr.__version__, "seed": 27,
           "counts": {k: sum(c["kind"] == k for c in cases) for k in ["found"] + SPELLING_KINDS},
           "errors": sum("error" in c for c in cases)}
    head = json.dumps(doc, indent=1)[:-2]
    lines = ",\n".join(json.dumps(c, separators=(",", ":")) for c in cases)
    with open(os.path.join(outdir, "numpy_spellings.json"), "w") as f:
        f.write(head + ',\n "cases": [\n' + lines + "\n ]\n}\n")
    print(f"numpy_spellings.json: {len(cases)} cases, {doc['errors']} errors, "
          f"{sum('oindex_shape' in c or 'oindex_error' in c for c in cases)} with an oindex meaning "
          f"({disagree} where zarr-python's oindex differs)", file=sys.stderr)


# ---------------------------------------------------------------- main


def main():
    args = [a for a in sys.argv[1:] if a != "--spellings"]
    refdir = args[0] if len(args) > 0 else "testdata/refdata"
    outdir = args[1] if len(args) > 1 else "testdata/selections"
    spelling_cases(outdir)
    if "--spellings" in sys.argv[1:]:
        return  # numpy_spellings.json only
    manifest = json.load(open(os.path.join(refdir, "manifest.json")))
    by_name = {c["name"]: c for c in manifest["cases"]}
    out = Out(outdir)
    out.refdir = refdir
    for name in READ_ARRAYS:
        read_cases(out, name, by_name[name])
    for name in WRITE_ARRAYS:
        write_cases(out, name, by_name[name])
    counts = {}
    for c in out.cases:
        key = c["mode"] + (" error" if "error" in c else "")
        counts[key] = counts.get(key, 0) + 1
    doc = {
        "generator": "testdata/selections/make_selections.py",
        "written_by": {"zarr-python": zarr.__version__, "numpy": np.__version__,
                       "python": sys.version.split()[0]},
        "refdir": "testdata/refdata",
        "counts": counts,
    }
    head = json.dumps(doc, indent=1)[:-2]
    lines = ",\n".join(json.dumps(c, separators=(",", ":")) for c in out.cases)
    with open(os.path.join(outdir, "cases.json"), "w") as f:
        f.write(head + ',\n "cases": [\n' + lines + "\n ]\n}\n")
    print(f"{len(out.cases)} cases {counts}; {len(os.listdir(out.expdir))} .npy files, {out.bytes} bytes",
          file=sys.stderr)


if __name__ == "__main__":
    main()
