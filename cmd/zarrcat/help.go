package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
)

// commandHelp is "zarrcat help COMMAND": what the command does, its flags,
// examples on the repository's testdata/ and its exit statuses.
var commandHelp = map[string]string{
	"consolidate": consolidateHelp,
	"clean": `zarrcat clean [--older-than D] DIR
Removes the temporary files (.gozarr-tmp-*) that writes killed before
their rename left under DIR, if older than D (default 1h, so a write still
running is not disturbed; 0: all of them). After a killed cp, give
--older-than 0 once no copy is running.
Example:
  zarrcat clean --older-than 0 /tmp/
`,
	"version": `zarrcat version (or --version)
Prints zarrcat's version: the module version it was installed at, or the
VCS revision of a build from a clone; the Go version and platform.
Example:
  zarrcat version
`,
	"info": `zarrcat info [--size] [--json] TARGET
Prints an array's or group's metadata (header only: no chunk is read):
shape, data type, fill value, chunk or shard and inner chunk shapes,
codecs, chunk key encoding, attributes; a group's children.
  --size   also what the array holds in its store: stored bytes,
           compression ratio, chunks (shards) initialized
  --json   one JSON document (a group's with its direct children). Its
           fields: shape, data_type, fill_value, dimension_names,
           chunk_key_encoding as zarr.json names them; codecs as text,
           codecs_json as zarr.json has them; chunk_shape is the write
           unit (a sharded array's shard shape, also in shard_shape, with
           inner_chunk_shape and index_location); with --size, storage:
           stored_bytes, decoded_bytes, compression_ratio, stored_chunks
           of the grid's chunks (shards of a sharded array), and
           initialized, the fraction of them stored (0 to 1)
Examples:
  zarrcat info testdata/refdata/v3_shard_start.zarr
  zarrcat info --size --json testdata/refdata/v3_gzip_l1.zarr
`,
	"get": `zarrcat get [--format F] [-o FILE] [--budget N] [--max-chunk-bytes N] [-q]
            [--points FILE | --mask FILE.npy | --blocks | --oindex]
            [--threshold N] [--edgeitems N] [--vmin X --vmax Y] [--width N]
            TARGET [SELECTION]
Writes the selected values in C order, streaming: memory stays within
--budget (default 256MiB) whatever the selection's size, the next tile
read while one is written.
  --format   npy, text (default on stdout), csv, json, raw (little-endian
             bytes) or png; from -o's extension when not given (.npy, .txt,
             .csv, .json, .raw, .bin, .png; anything else: npy; -o /dev/stdout
             and a terminal: text, as -o -). csv has one record per run of
             the last dimension, the planes of 3-D and more one after
             another with nothing between them (RFC 4180 has no blank
             records; text output leaves a blank line); json nests as
             NumPy's tolist(), one innermost list a line
  -o FILE    a regular file is replaced atomically when get succeeds;
             /dev/null, FIFOs, terminals and links are written in place
  -q         no progress line (shown on a terminal when writing to -o)
  --points FILE  a coordinate selection (zarr-python's vindex): one point a
             line ("i j", or "i, j"), or a .npy integer array of shape
             (n, rank); the output is the n values in that order
  --mask FILE.npy  the elements where a boolean array of the array's shape
             is true, in C order
  --blocks   SELECTION indexes the chunk grid (shards when sharded):
             integers and step-1 slices, as zarr-python's blocks
  --oindex   index arrays select orthogonally (zarr-python's oindex):
             "[0, 2], [1, 3]" is then the 2x2 result, not 2 points (1-D
             arrays and masks only, as oindex)
  --threshold N, --edgeitems N  text as NumPy prints it (what a terminal
             gets): a header, aligned columns, and past N elements
             (default 1000; 0: never) only the first and last edgeitems
             (default 3) along each dimension
  png        a picture of a 2-D selection (or of one plane): viridis over
             the range of the values shown, or --vmin X --vmax Y; NaN and
             fill values transparent; past --width N pixels (default 1024)
             along a side, every s-th row and column (read only those);
             the range and statistics in the PNG's Description
SELECTION uses NumPy syntax: "0:10, :, 5", "[..., ::2]", "-1"; index
arrays and boolean masks in brackets mean what they mean in NumPy:
"[3, 1, 4], :, 5" (any order, repeats, negatives; tuples are lists, as
in Python), "[True, False, True], ..."; several broadcast and select
pointwise, "[0, 2, 4], [1, 1, 3]"
three values; nested lists are arrays of rank above 1, "[[0], [2]], [1, 3]"
a 2x2 result (NumPy's broadcast shape), a 2-D mask "[[True, False], [False,
True]], ..." its true elements; None (np.newaxis) adds a dimension of
length 1. A lone list is one index array, as in NumPy: "[3, 1, 4]" is
rows 3, 1 and 4 (a[[3, 1, 4]]), and refused where NumPy refuses it:
"[[0], 1]" nests unevenly; brackets around a text that is no Python list
(slices inside, as in "[..., ::2]") only wrap the selection. A tile of output decodes each
chunk it touches once.
Examples:
  zarrcat get testdata/refdata/v3_dtype_int16.zarr "0:2, 0:3"
  zarrcat get testdata/refdata/v3_dtype_int16.zarr "[[30, 0, 0], ::6]"
  zarrcat get testdata/refdata/v3_dtype_int16.zarr "[0, 2, 4], [1, 1, 3]"
  zarrcat get --threshold 100 testdata/refdata/v3_dtype_int16.zarr
  zarrcat get --points testdata/selections/zarrcat_points.txt testdata/refdata/v3_dtype_int16.zarr
  zarrcat get --mask testdata/selections/zarrcat_mask.npy testdata/refdata/v3_dtype_int16.zarr
  zarrcat get --blocks testdata/refdata/v3_shard_end_edges.zarr "-1, 0"
  zarrcat get --format csv testdata/refdata/v3_dtype_int16.zarr "0:4"
  zarrcat get -o /tmp/a.npy testdata/refdata/v3_shard_start.zarr
  zarrcat get -o /tmp/field.png testdata/png/v3_field.zarr
  zarrcat get --format npy -o /dev/null testdata/refdata/v3_gzip_l1.zarr
  zarrcat get testdata/refdata/v3_dtype_int16.zarr | head -3
`,
	"ls": `zarrcat ls [--depth N] [--size] [--json] TARGET
Lists a hierarchy, one node a line with its path: node type, Zarr format,
data type, shape, chunks (or shards of inner chunks) and codecs. Children
are opened concurrently (64 requests in flight), which is what listing
an object store needs; a group with consolidated metadata is walked from
it, with no listing and no request per node.
Paths start at TARGET, written "/" (as h5ls -r writes them); --json
gives each node's path inside TARGET without it ("" for TARGET itself).
  --depth N  N levels below TARGET (default: all)
  --size     stored bytes, compression ratio and chunks initialized
  --json     the hierarchy as one JSON document
Example:
  zarrcat ls --size testdata/refdata/v3_group.zarr
`,
	"tree": `zarrcat tree [--depth N] [--size] [--json] TARGET
ls drawn as a tree.
Example:
  zarrcat tree --size testdata/refdata/v3_group.zarr
`,
	"stats": `zarrcat stats [--hist N] [--json] [--budget N] [-q] TARGET [SELECTION]
Count, NaN and fill-value counts, min, max, mean and standard deviation
(population, NumPy's ddof=0; NaNs left out) of a selection, and with
--hist N a histogram of N equal bins from min to max (a second pass).
Streams the selection within --budget (default 256MiB), each tile
computed on every core. Booleans, integers and real floats.
Examples:
  zarrcat stats testdata/refdata/v2_fill_nan.zarr
  zarrcat stats --hist 8 --json testdata/refdata/v3_dtype_int16.zarr "0:10"
`,
	"cp": `zarrcat cp [--chunks SHAPE] [--shards SHAPE] [--codec C] [--dtype T]
           [--resume | --overwrite] [--validate] [--budget N] [--json] [-q] [-m MSG] SOURCE DESTINATION
Copies an array, or a group and everything below it, between any two
locations (directories, file://, s3://, a new .zip/.ozx), written as Zarr
v3 (a v2 source becomes v3), write unit by write unit of the destination
(chunks, or shards), several at once within --budget (default 512MiB).
Without options the copy keeps the source's codecs.
DESTINATION as cp -r: a new path is created; an existing directory that
is not Zarr gets the copy as DIR/NAME (NAME: SOURCE's last element) and
is never written into; an existing array or group is refused (unless
--resume or --overwrite). Inside a Zarr hierarchy (g.zarr/new/x) missing
groups are created and a node inside an array is refused; a consolidated
group above the copy is consolidated again. Shapes, codec levels and the
fill value are checked before anything is written, and so is every value
when --dtype narrows (a value it cannot hold); a copy that fails later (a
store error) removes what it wrote. A killed or interrupted (Ctrl-C) copy
stays for --resume, which also removes the temporary files the killed run
left in a local DESTINATION (zarrcat clean removes those of other writes). A DESTINATION inside an Icechunk repository
(REPO/NAME) is committed onto the branch --ref names (default main) with
the message -m MSG (see zarrcat help log).
  --chunks 64,64    chunk shape (inner chunks with --shards; 64x64 too)
  --shards 512,512  shard shape: a sharded copy
  --codec C         compressors after the bytes codec: zstd:LEVEL,
                    gzip:LEVEL, blosc:CNAME:SHUFFLE:CLEVEL, crc32c, a chain
                    "zstd:3,crc32c", none, or JSON ('{"name": "zstd", ...}'
                    or a list)
  --dtype T         cast (bool, int8..uint64, float16..float64); a value
                    the new type cannot hold is an error naming it, found
                    before anything is written (a narrowing cast reads the
                    source twice)
  --resume          complete an interrupted copy: write units whose key
                    exists and reads back equal to the source are kept
  --overwrite       replace an array or group at DESTINATION (all of it),
                    or an archive (a new one, renamed over it when complete)
  --validate        compare every copied array with its source at the end
Examples:
  zarrcat cp testdata/refdata/v2_group.zarr /tmp/g.zarr
  zarrcat cp --chunks 8,8 --shards 16,16 --codec blosc:lz4:shuffle:5 \
      --validate testdata/refdata/v3_shard_start.zarr /tmp/s.zarr
  zarrcat cp --resume --chunks 8,8 --shards 16,16 --codec blosc:lz4:shuffle:5 \
      testdata/refdata/v3_shard_start.zarr /tmp/s.zarr
`,
	"diff": `zarrcat diff [--json] [--budget N] [-q] A B
Compares two arrays: metadata (shape, data type, fill value, attributes),
layout (format, chunks, codecs: reported, not a difference), then values,
NaN equal to NaN: how many elements differ, the first one's coordinates
and values, the largest |a-b|. Two groups (or a group and an array) are
compared node by node, by path from each: nodes only in A or only in B,
nodes of another type, group attributes, and every array both hold.
Exit status: 0 the same, 3 different, 1 an error, 2 a usage mistake.
Examples:
  zarrcat diff testdata/refdata/v3_shard_start.zarr /tmp/s.zarr
  zarrcat diff testdata/refdata/v3_group.zarr /tmp/g.zarr
`,
}

// cmdHelp prints the usage, or one command's help.
func cmdHelp(args []string, w io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(w, usage)
		return nil
	}
	h, ok := commandHelp[args[0]]
	if !ok {
		names := make([]string, 0, len(commandHelp))
		for k := range commandHelp {
			names = append(names, k)
		}
		slices.Sort(names)
		if s := suggest(args[0], names); s != "" {
			return fmt.Errorf("%w: no help for %q; did you mean %q?", errUsage, args[0], s)
		}
		return fmt.Errorf("%w: no help for %q (commands: %s)", errUsage, args[0], strings.Join(names, ", "))
	}
	fmt.Fprint(w, h)
	switch args[0] {
	case "get", "stats", "cp", "diff":
		switch args[0] {
		case "get", "stats":
			fmt.Fprint(w, "Exit status: 0 success, 1 an error (one line on stderr), 2 a usage mistake\n(a flag, an argument, a selection that does not fit the array).\n")
		case "cp": // no SELECTION
			fmt.Fprint(w, "Exit status: 0 success, 1 an error (one line on stderr), 2 a usage mistake\n(a flag, an argument).\n")
		}
		fmt.Fprint(w, "A progress line is drawn on stderr when it is a terminal (-q: never).\n")
	default:
		fmt.Fprint(w, "Exit status: 0 success, 1 an error (one line on stderr), 2 a usage mistake.\n")
	}
	return nil
}
