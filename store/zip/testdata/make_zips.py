"""Zip the reference corpus with Python's zipfile, for store/zip's tests.

    zarr-python store/zip/testdata/make_zips.py testdata/refdata OUTDIR [subset]

writes, from every .zarr tree of the corpus (with "subset": only the
smallest case of each category and the two group hierarchies; entry names
relative to the corpus directory, as the manifest's paths are):
  corpus_deflate.zip  every entry ZIP_DEFLATED, in os.walk order
  corpus_stored.zip   every entry ZIP_STORED with force_zip64 (ZIP64 local
                      headers), except that the entries of a few arrays
                      hold stale bytes, appended again in mode "a" with
                      other stale bytes, and a third time with their
                      real bytes: names repeat, and only the last entry
                      is right (what zarr-python's ZipStore leaves after
                      rewrites)
"""
import json
import os
import sys
import warnings
import zipfile


def subset(root):
    with open(os.path.join(root, "manifest.json")) as f:
        m = json.load(f)
    best = {}
    for c in m["cases"]:
        if c.get("group"):
            continue
        b = best.get(c["category"])
        if b is None or c["stored_bytes"] < b["stored_bytes"]:
            best[c["category"]] = c
    tops = {c["path"].strip("/").split("/")[0] for c in best.values()}
    return tops | {g["path"].strip("/") for g in m["groups"]}


def corpus_files(root, only=None):
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        rel = os.path.relpath(dirpath, root)
        top = rel.split(os.sep)[0]
        if rel == "." or not top.endswith(".zarr") or (only is not None and top not in only):
            continue
        for name in sorted(filenames):
            path = os.path.join(dirpath, name)
            yield os.path.relpath(path, root).replace(os.sep, "/"), path


def main(root, out, only=None):
    files = list(corpus_files(root, only))
    with zipfile.ZipFile(os.path.join(out, "corpus_deflate.zip"), "w", zipfile.ZIP_DEFLATED) as z:
        for name, path in files:
            z.write(path, name)
    stored = os.path.join(out, "corpus_stored.zip")
    again = {n for n, _ in files if n.startswith(("v3_gzip_l1.zarr/", "v2_gzip.zarr/", "v3_group.zarr/"))}
    with zipfile.ZipFile(stored, "w", zipfile.ZIP_STORED) as z:
        for name, path in files:
            with open(path, "rb") as f, z.open(name, "w", force_zip64=True) as dst:
                dst.write(b"stale value, replaced below" if name in again else f.read())
    warnings.simplefilter("ignore")  # "Duplicate name": on purpose
    for value in (b"stale too", None):
        with zipfile.ZipFile(stored, "a", zipfile.ZIP_STORED) as z:
            for name, path in files:
                if name in again:
                    if value is None:
                        z.write(path, name)
                    else:
                        z.writestr(name, value)
    for f in ("corpus_deflate.zip", "corpus_stored.zip"):
        with zipfile.ZipFile(os.path.join(out, f)) as z:
            print(f, os.path.getsize(os.path.join(out, f)), "bytes,", len(z.infolist()), "entries")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], subset(sys.argv[1]) if sys.argv[3:] == ["subset"] else None)
