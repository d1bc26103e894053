"""Differential check for codecs/zfp's TestDifferential: for each case of
DIR/cases.json (type, shape, zfpy parameters) compress DIR/<i>.bin with
zfpy and write DIR/<i>.zfp and the decoded values DIR/<i>.dec.

    /work/shared/tools/zarr-python diff.py DIR
"""
import json
import sys

import numpy as np
import zfpy

top = sys.argv[1]
cases = json.load(open(top + "/cases.json"))
for i, c in enumerate(cases):
    a = np.fromfile("%s/%d.bin" % (top, i), dtype="<" + c["dtype"]).reshape(c["shape"])
    enc = zfpy.compress_numpy(a, **c["params"])
    open("%s/%d.zfp" % (top, i), "wb").write(enc)
    zfpy.decompress_numpy(enc).astype("<" + c["dtype"]).tofile("%s/%d.dec" % (top, i))
print(len(cases), "cases")
