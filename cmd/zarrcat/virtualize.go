package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gozarr/gozarr/hdf5"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/kerchunk"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/virtual"
)

// virtualizeHelp is the help of "zarrcat virtualize".
const virtualizeHelp = `zarrcat virtualize [-o FILE] [--url URL] [--skip-unsupported] FILE.h5|FILE.nc[/GROUP]
Reads the structure of an HDF5 or NetCDF-4 file (no HDF5 library: the file
format is read in Go) and writes kerchunk references (JSON, version 1) to
every group and dataset: Zarr v2 metadata (dtype, shape, chunks, fill value,
the filter pipeline as numcodecs filters, attributes, _ARRAY_DIMENSIONS from
the dimension scales) and, for every chunk, the file's URL and the chunk's
offset and length, so Zarr readers (gozarr, fsspec, xarray) read the file's
chunks by range. FILE is a local path or an s3://, http(s):// URL; a
/GROUP after it makes references to that group's subtree only, the group
as their root.
  -o FILE   where to write the references (default stdout; a regular file
            is replaced atomically)
  --url URL the file's location written in each reference (default: FILE,
            made absolute when local)
  --skip-unsupported  leave out datasets references cannot describe
            (compound or variable-length data, scale-offset filter, ...)
            and list them on stderr, instead of failing
Examples:
  zarrcat virtualize -o /tmp/cf.json hdf5/testdata/cf.nc
  zarrcat virtualize --url s3://bucket/data/latest.h5 -o /tmp/latest.json hdf5/testdata/latest.h5
  zarrcat virtualize -o /tmp/surface.json hdf5/testdata/cf.nc/surface
`

func init() { commandHelp["virtualize"] = virtualizeHelp + hdf5TargetHelp }

// hdf5TargetHelp tells how other commands read HDF5 files.
const hdf5TargetHelp = `
An HDF5 or NetCDF-4 file (.h5, .hdf5, .he5, .nc, .nc4) is also a TARGET of
info, get, ls, tree, stats, cp and diff: it is virtualized in memory on
open and read through the references; the rest of the path names the node:
  zarrcat tree hdf5/testdata/cf.nc
  zarrcat get hdf5/testdata/cf.nc/temp "0, :, 0:4"
`

// hdf5Exts are the file name extensions that make a TARGET an HDF5 file.
var hdf5Exts = []string{".h5", ".hdf5", ".he5", ".nc", ".nc4"}

// splitHDF5 splits a TARGET into an HDF5 file and the node path inside
// it, when one of its leading path segments ends with an HDF5 extension
// (and, locally, is a regular file).
func splitHDF5(target string) (file, node string, ok bool) {
	remote := strings.Contains(target, "://") && !strings.HasPrefix(target, "file://")
	parts := strings.Split(target, "/")
	for i := 1; i <= len(parts); i++ {
		p := strings.Join(parts[:i], "/")
		lower := strings.ToLower(p)
		match := false
		for _, e := range hdf5Exts {
			match = match || strings.HasSuffix(lower, e)
		}
		if !match {
			continue
		}
		if !remote {
			info, err := os.Stat(strings.TrimPrefix(p, "file://"))
			if err != nil || !info.Mode().IsRegular() {
				continue
			}
		}
		return p, strings.Join(parts[i:], "/"), true
	}
	return "", "", false
}

// openHDF5Target opens a TARGET inside an HDF5 file as a kerchunk store
// over references made in memory (ok false when TARGET names no HDF5
// file). Only the file itself may be read through them. Datasets the
// references cannot describe are left out.
func openHDF5Target(ctx context.Context, target string) (store.Reader, string, bool, error) {
	file, node, ok := splitHDF5(target)
	if !ok {
		return nil, "", false, nil
	}
	st, key, url, err := openHDF5(ctx, file)
	if err != nil {
		return nil, "", true, err
	}
	f, err := hdf5.Open(ctx, st, key)
	if err != nil {
		return nil, "", true, err
	}
	refs, err := hdf5.References(ctx, f, hdf5.RefsOptions{URL: url, SkipUnsupported: true})
	if err != nil {
		return nil, "", true, err
	}
	var doc bytes.Buffer
	if err := refs.WriteJSON(&doc); err != nil {
		return nil, "", true, err
	}
	m := mem.New()
	if err := m.Set(ctx, "refs.json", doc.Bytes()); err != nil {
		return nil, "", true, err
	}
	ks, err := kerchunk.Open(ctx, m, "refs.json", kerchunk.WithResolverOptions(virtual.AllowFile(url)))
	if err != nil {
		return nil, "", true, err
	}
	return ks, node, true, nil
}

// cmdVirtualize runs "zarrcat virtualize".
func cmdVirtualize(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	flags, pos, err := splitArgs(args, map[string]bool{"o": true, "url": true, "skip-unsupported": false})
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: virtualize takes one FILE", errUsage)
	}
	file, node, ok := splitHDF5(pos[0])
	if !ok {
		file, node = pos[0], ""
	}
	st, key, url, err := openHDF5(ctx, file)
	if err != nil {
		return err
	}
	if u, ok := flags["url"]; ok {
		url = u
	}
	f, err := hdf5.Open(ctx, st, key)
	if err != nil {
		return err
	}
	_, skip := flags["skip-unsupported"]
	refs, err := hdf5.References(ctx, f, hdf5.RefsOptions{URL: url, Root: node, SkipUnsupported: skip})
	if errors.Is(err, hdf5.ErrUnsupported) {
		return fmt.Errorf("%w (--skip-unsupported leaves such datasets out)", err)
	}
	if err != nil {
		return err
	}
	for _, s := range refs.Skipped {
		fmt.Fprintln(stderr, "zarrcat: skipped", s)
	}
	if o := flags["o"]; strings.HasSuffix(strings.ToLower(o), ".parq") {
		return writeParq(ctx, refs, o) // parq.go
	}
	out, err := createOutput(flags["o"], stdout)
	if err != nil {
		return err
	}
	if err := refs.WriteJSON(out); err != nil {
		out.Abort()
		return pipeErr(err)
	}
	return pipeErr(out.Commit())
}

// openHDF5 opens the store holding an HDF5 file named by a local path or a
// URL, and returns it with the file's key and the URL references name it
// by (a local path made absolute).
func openHDF5(ctx context.Context, name string) (store.Reader, string, string, error) {
	if strings.Contains(name, "://") && !strings.HasPrefix(name, "file://") {
		i := strings.LastIndex(name, "/")
		if i < 0 || i == len(name)-1 || strings.HasSuffix(name[:i], ":/") {
			return nil, "", "", fmt.Errorf("%w: %s names no file", errUsage, name)
		}
		st, _, err := openTarget(ctx, name[:i])
		if err != nil {
			return nil, "", "", err
		}
		return st, name[i+1:], name, nil
	}
	p := strings.TrimPrefix(name, "file://")
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, "", "", err
	}
	info, err := os.Stat(abs)
	if err != nil {
		return nil, "", "", err
	}
	if !info.Mode().IsRegular() {
		return nil, "", "", fmt.Errorf("%s: not a regular file", name)
	}
	st, err := fs.New(filepath.Dir(abs), fs.ReadOnly())
	if err != nil {
		return nil, "", "", err
	}
	return st, filepath.Base(abs), abs, nil
}
