"""What zarr-python 3 writes and refuses when nodes are created.

Run: ../shared/tools/zarr-python testdata/create/make_create.py  (from the repo root)
Writes testdata/create/create.json, read by zarr/create_test.go.
"""
import json, os, shutil, tempfile
import zarr
from zarr.storage import LocalStore

out = {"zarr": zarr.__version__}
d = tempfile.mkdtemp()
st = LocalStore(d)
zarr.create_array(st, name="x/y/z", shape=(4,), chunks=(2,), dtype="i4")
docs = {}
for root, _, files in os.walk(d):
    for f in files:
        rel = os.path.relpath(os.path.join(root, f), d)
        if f == "zarr.json":
            docs[rel] = json.load(open(os.path.join(root, f)))
out["parents"] = {k: v for k, v in sorted(docs.items()) if v["node_type"] == "group"}
out["refused"] = {}
for name, fn in [
    ("array_over_array", lambda: zarr.create_array(st, name="x/y/z", shape=(4,), chunks=(2,), dtype="i4")),
    ("array_inside_array", lambda: zarr.create_array(st, name="x/y/z/w", shape=(4,), chunks=(2,), dtype="i4")),
    ("group_inside_array", lambda: zarr.create_group(st, path="x/y/z/g")),
    ("group_over_group", lambda: zarr.create_group(st, path="x/y")),
    ("array_over_group", lambda: zarr.create_array(st, name="x/y", shape=(4,), chunks=(2,), dtype="i4")),
]:
    try:
        fn()
        out["refused"][name] = None
    except Exception as e:
        out["refused"][name] = type(e).__name__
# overwrite=True replaces the array and its chunks
a = zarr.create_array(st, name="o", shape=(4,), chunks=(2,), dtype="i4")
a[:] = [1, 2, 3, 4]
zarr.create_array(st, name="o", shape=(2,), chunks=(2,), dtype="i4", overwrite=True)
out["after_overwrite"] = sorted(os.path.relpath(os.path.join(r, f), os.path.join(d, "o"))
                                for r, _, fs in os.walk(os.path.join(d, "o")) for f in fs)
shutil.rmtree(d)
json.dump(out, open(os.path.join(os.path.dirname(__file__), "create.json"), "w"), indent=1, sort_keys=True)
