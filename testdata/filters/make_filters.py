"""Make the numcodecs filter and compressor fixtures of testdata/filters
(issue 14) with zarr-python 3.4 and numcodecs 0.17.

Run from the repository root in the zarr-python chroot:

    ../shared/tools/zarr-python testdata/filters/make_filters.py

Every fixture is NAME.zarr, a Zarr v2 array whose filters (or compressor)
numcodecs applied, beside NAME.npy, the values zarr-python reads back
(lossy filters: the decoded values, not the input). The data include
values that round, ties, negatives and out-of-range cases where the filter
defines them. vectors.json holds numcodecs' fletcher32 and jenkins_lookup3
checksums of a few byte strings. The script is deterministic.
"""

import json
import os
import shutil
import warnings

import numcodecs
import numpy as np
import zarr
from numcodecs.fletcher32 import Fletcher32
from numcodecs.checksum32 import JenkinsLookup3

warnings.filterwarnings("ignore")
HERE = os.path.dirname(os.path.abspath(__file__))


def make(name, data, chunks, filters=None, compressor=None, fill=0):
    path = os.path.join(HERE, name + ".zarr")
    shutil.rmtree(path, ignore_errors=True)
    a = zarr.create_array(path, shape=data.shape, chunks=chunks, dtype=data.dtype, zarr_format=2,
                          fill_value=fill, filters=filters, compressors=compressor)
    a[...] = data
    got = zarr.open_array(path, mode="r")[...]
    np.save(os.path.join(HERE, name + ".npy"), got)


rng = np.random.default_rng(14)
f8 = np.concatenate([np.linspace(-3.2, 28.7, 37), [0.05, 0.15, 0.25, 0.35, 2.5, -2.5, 1e3]])
make("fixedscaleoffset_f8_u1", (f8 + 10).clip(0, 25), (16,),
     filters=[numcodecs.FixedScaleOffset(offset=0, scale=10, dtype="<f8", astype="|u1")])
make("fixedscaleoffset_f4_i2", f8.astype("<f4"), (10,),
     filters=[numcodecs.FixedScaleOffset(offset=1.5, scale=100.0, dtype="<f4", astype="<i2")])
make("fixedscaleoffset_i8_i1", np.arange(-40, 40, 3, dtype="<i8"), (8,),
     filters=[numcodecs.FixedScaleOffset(offset=10, scale=2, dtype="<i8", astype="|i1")])
make("quantize_f8_d2", f8 * 1.37, (11,), filters=[numcodecs.Quantize(digits=2, dtype="<f8")])
make("quantize_f8_f4_d3", f8 / 7, (11,), filters=[numcodecs.Quantize(digits=3, dtype="<f8", astype="<f4")])
make("quantize_f4_d1", (f8 * 3.3).astype("<f4"), (11,), filters=[numcodecs.Quantize(digits=1, dtype="<f4")])
r32 = rng.standard_normal(300).astype("<f4") * 100
make("bitround_f4_k7", r32, (128,), filters=[numcodecs.BitRound(keepbits=7)])
make("bitround_f8_k20", r32.astype("<f8") / 3, (128,), filters=[numcodecs.BitRound(keepbits=20)])
make("bitround_f2_k3", (r32 / 10).astype("<f2"), (128,), filters=[numcodecs.BitRound(keepbits=3)])
make("packbits", rng.random(77) > 0.4, (30,), filters=[numcodecs.PackBits()])
make("packbits_2d", rng.random((9, 5)) > 0.5, (4, 4), filters=[numcodecs.PackBits()])
labels = ["apple", "kiwi", "fig", "é€"]
words = np.array([labels[i % 4] for i in range(23)] + ["none", ""], dtype="<U5")
make("categorize_U5", words, (10,), fill="",
     filters=[numcodecs.Categorize(labels=labels, dtype="<U5", astype="|u1")])
make("categorize_U5_u2", words, (10,), fill="",
     filters=[numcodecs.Categorize(labels=labels, dtype="<U5", astype="<u2")])
make("astype_f8_f4", f8 / 3, (16,), filters=[numcodecs.AsType(encode_dtype="<f4", decode_dtype="<f8")])
make("astype_i4_i2", np.arange(-30000, 30000, 997, dtype="<i4"), (16,),
     filters=[numcodecs.AsType(encode_dtype="<i2", decode_dtype="<i4")])
ints = np.arange(1000, dtype="<i4") * 7919 % 65537
make("fletcher32", ints, (333,), filters=[Fletcher32()])
make("fletcher32_odd", np.arange(77, dtype="|u1"), (33,), filters=[Fletcher32()])
make("jenkins_lookup3", ints, (333,), filters=[JenkinsLookup3()])
make("jenkins_lookup3_initval", np.arange(77, dtype="|u1"), (33,), filters=[JenkinsLookup3(initval=12345)])
make("base64", ints, (333,), compressor=numcodecs.Base64())
make("base64_filter_zlib", ints, (333,), filters=[numcodecs.Base64()], compressor=numcodecs.Zlib(level=1))
# kerchunk writes every HDF5 filter as a v2 filter, compression included:
make("zstd_as_filter", ints, (333,), filters=[numcodecs.Zstd(level=1)])
make("blosc_as_filter", ints, (333,), filters=[numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1)])
make("lzma", ints, (400,), compressor=numcodecs.LZMA())
make("lzma_preset9_crc32", ints, (400,), compressor=numcodecs.LZMA(preset=9, check=1))
make("lzma_alone", ints, (400,), compressor=numcodecs.LZMA(format=2))
make("lzma_raw", ints, (400,), compressor=numcodecs.LZMA(format=3, filters=[{"id": 33, "preset": 1}]))
make("fixedscaleoffset_zstd", f8, (16,),
     filters=[numcodecs.FixedScaleOffset(offset=0, scale=1000, dtype="<f8", astype="<i4")],
     compressor=numcodecs.Zstd(level=3))

vectors = []
for n in [0, 1, 2, 3, 11, 12, 13, 24, 25, 719, 720, 721, 1000, 4099]:
    data = bytes((i * 131 + 7) % 256 for i in range(n))
    vectors.append({
        "len": n,
        # numcodecs' fletcher32 fails on empty input
        "fletcher32": int(np.frombuffer(Fletcher32().encode(data)[-4:], "<u4")[0]) if n else None,
        "jenkins_lookup3": int(np.frombuffer(JenkinsLookup3().encode(data)[-4:], "<u4")[0]),
        "jenkins_lookup3_seed7": int(np.frombuffer(JenkinsLookup3(initval=7).encode(data)[-4:], "<u4")[0]),
    })
with open(os.path.join(HERE, "vectors.json"), "w") as f:
    json.dump({"data": "byte i is (i*131+7) % 256", "vectors": vectors}, f, indent=1)

# Zarr v3: zarr-python 3 writes the typed filters before "bytes" (array ->
# array) and the checksums and lzma after it.
from zarr.codecs import numcodecs as nc


def make3(name, data, chunks, filters=(), compressors=None):
    path = os.path.join(HERE, "v3_" + name + ".zarr")
    shutil.rmtree(path, ignore_errors=True)
    a = zarr.create_array(path, shape=data.shape, chunks=chunks, dtype=data.dtype, zarr_format=3,
                          fill_value=0, filters=list(filters), compressors=compressors)
    a[...] = data
    np.save(os.path.join(HERE, "v3_" + name + ".npy"), zarr.open_array(path, mode="r")[...])


make3("fixedscaleoffset", (f8 + 10).clip(0, 25), (16,),
      [nc.FixedScaleOffset(offset=0, scale=10, dtype="<f8", astype="|u1")])
make3("quantize", f8 * 1.37, (11,), [nc.Quantize(digits=2, dtype="<f8")])
make3("astype", f8 / 3, (16,), [nc.AsType(encode_dtype="<f4", decode_dtype="<f8")])
make3("bitround", r32, (128,), [nc.BitRound(keepbits=7)])
make3("packbits", rng.random(77) > 0.4, (30,), [nc.PackBits()])
make3("fletcher32", ints, (333,), compressors=[nc.Fletcher32()])
make3("jenkins_lookup3", ints, (333,), compressors=[nc.JenkinsLookup3()])
make3("lzma", ints, (400,), compressors=[nc.LZMA()])
