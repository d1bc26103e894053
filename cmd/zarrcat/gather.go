package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/zarr"
)

// This file holds get's coordinate selections: --points FILE (one point a
// row, from a text or .npy file) and --mask FILE.npy (a boolean array of
// the array's shape), read in batches of points within the budget.

// maxPointsFileBytes bounds a points or mask file (they are read whole).
const maxPointsFileBytes = 1 << 30

// readPointsFile reads the points of --points: a .npy integer array of
// shape (n, rank) (or (n,) for a 1-d array), or text with one point a line,
// coordinates separated by spaces or commas ('#' starts a comment).
func readPointsFile(path string, shape []int) (nd.Points, error) {
	rank := len(shape)
	coords := make([][]int, rank)
	if strings.HasSuffix(path, ".npy") {
		arr, err := readNpyBounded(path)
		if err != nil {
			return nd.Points{}, err
		}
		if arr.FortranOrder {
			return nd.Points{}, fmt.Errorf("%w: --points %s: Fortran-ordered .npy (write it in C order)", errUsage, path)
		}
		n, ok := 0, false
		switch {
		case len(arr.Shape) == 2 && arr.Shape[1] == rank:
			n, ok = arr.Shape[0], true
		case len(arr.Shape) == 1 && rank == 1:
			n, ok = arr.Shape[0], true
		}
		if !ok {
			return nd.Points{}, fmt.Errorf("%w: --points %s: shape %v, want (n, %d)", errUsage, path, arr.Shape, rank)
		}
		get, err := intReader(arr.Descr)
		if err != nil {
			return nd.Points{}, fmt.Errorf("%w: --points %s: %v", errUsage, path, err)
		}
		size := len(arr.Data) / max(1, n*rank)
		for d := range coords {
			coords[d] = make([]int, n)
		}
		for k := range n {
			for d := range rank {
				v, exact := get(arr.Data[(k*rank+d)*size:])
				if exact != "" { // past int: say the value in the file, not a clamped one
					return nd.Points{}, fmt.Errorf("%w: index %s of dimension %d (length %d), point %d", nd.ErrOutOfBounds, exact, d, shape[d], k)
				}
				coords[d][k] = v
			}
		}
		return nd.NormalizePoints(coords, shape)
	}
	f, err := os.Open(path)
	if err != nil {
		return nd.Points{}, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		text, _, _ := strings.Cut(sc.Text(), "#")
		fields := strings.FieldsFunc(text, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' })
		if len(fields) == 0 {
			continue
		}
		if len(fields) != rank {
			return nd.Points{}, fmt.Errorf("%w: --points %s line %d: %s for an array of %s", errUsage, path, line, plural(len(fields), "coordinate"), plural(rank, "dimension"))
		}
		for d, s := range fields {
			v, err := strconv.Atoi(s)
			if errors.Is(err, strconv.ErrRange) {
				return nd.Points{}, fmt.Errorf("--points %s line %d: %w: index %s of dimension %d (length %d)", path, line, nd.ErrOutOfBounds, s, d, shape[d])
			}
			if err != nil {
				return nd.Points{}, fmt.Errorf("%w: --points %s line %d: %q is not an integer", errUsage, path, line, s)
			}
			coords[d] = append(coords[d], v)
		}
	}
	if err := sc.Err(); err != nil {
		return nd.Points{}, err
	}
	for d := range coords {
		if coords[d] == nil {
			coords[d] = []int{}
		}
	}
	return nd.NormalizePoints(coords, shape)
}

// readMaskFile reads --mask: a .npy boolean array of the array's shape.
func readMaskFile(path string, shape []int) (nd.Points, error) {
	arr, err := readNpyBounded(path)
	if err != nil {
		return nd.Points{}, err
	}
	if arr.Descr != "|b1" {
		return nd.Points{}, fmt.Errorf("%w: --mask %s: dtype %s, want bool (|b1)", errUsage, path, arr.Descr)
	}
	if arr.FortranOrder {
		return nd.Points{}, fmt.Errorf("%w: --mask %s: Fortran-ordered .npy (write it in C order)", errUsage, path)
	}
	if fmt.Sprint(arr.Shape) != fmt.Sprint(shape) {
		return nd.Points{}, fmt.Errorf("--mask %s: shape %s, the array's is %s: %w", path, pyShape(arr.Shape), pyShape(shape), nd.ErrInvalidSelection)
	}
	mask := make([]bool, len(arr.Data))
	for i, b := range arr.Data {
		mask[i] = b != 0
	}
	return nd.MaskPoints(mask, shape)
}

// readNpyBounded reads a .npy file of at most maxPointsFileBytes.
func readNpyBounded(path string) (*npy.Array, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, err
	} else if fi.Size() > maxPointsFileBytes {
		return nil, fmt.Errorf("%w: %s is %d bytes, more than the %d a points or mask file may have", errUsage, path, fi.Size(), maxPointsFileBytes)
	}
	return npy.ReadFile(path)
}

// intReader returns a decoder of one integer of the .npy descr (any
// little-endian integer type; loadScalar reads it): the value, or its
// digits when an int cannot hold it.
func intReader(descr string) (func([]byte) (int, string), error) {
	dt, big, err := dtype.ParseNumpy(descr)
	if err != nil {
		return nil, err
	}
	if big || (dt.Kind() != dtype.Int && dt.Kind() != dtype.Uint) {
		return nil, fmt.Errorf("dtype %s: want a little-endian integer type", descr)
	}
	return func(b []byte) (int, string) {
		v := loadScalar(dt, b[:dt.Size()])
		switch {
		case v.neg && v.i < math.MinInt:
			return 0, strconv.FormatInt(v.i, 10)
		case v.neg:
			return int(v.i), ""
		case v.u > math.MaxInt:
			return 0, strconv.FormatUint(v.u, 10)
		}
		return int(v.u), ""
	}, nil
}

// pointsSelection returns the coordinate selection --points or --mask asks
// for, and whether there is one; both, or one with a SELECTION, is a
// usage error.
func pointsSelection(a *zarr.Array, flags map[string]string, pos []string) (nd.Points, bool, error) {
	pf, hasP := flags["points"]
	mf, hasM := flags["mask"]
	if !hasP && !hasM {
		return nd.Points{}, false, nil
	}
	if hasP && hasM || len(pos) > 1 {
		return nd.Points{}, false, fmt.Errorf("%w: --points, --mask and a SELECTION exclude each other", errUsage)
	}
	if _, ok := flags["blocks"]; ok {
		return nd.Points{}, false, fmt.Errorf("%w: --blocks selects with a SELECTION, not --points or --mask", errUsage)
	}
	var pts nd.Points
	var err error
	if hasP {
		pts, err = readPointsFile(pf, a.Shape())
	} else {
		pts, err = readMaskFile(mf, a.Shape())
	}
	if err != nil && !errors.Is(err, errUsage) {
		flag := "--points " + pf
		if hasM {
			flag = "--mask " + mf
		}
		// Name the flag and its file once: the file's error may start
		// with its path, an invalid selection with "--mask PATH".
		msg := strings.TrimPrefix(err.Error(), pf+mf+": ")
		if !strings.Contains(msg, flag) {
			msg = flag + ": " + msg
		}
		err = &targetError{msg: msg, err: err}
	}
	return pts, true, err
}

// streamPoints reads pts in order, in batches of at most blockBytes of
// values, and hands each batch to use (valid until it returns).
func streamPoints(ctx context.Context, a *zarr.Array, pts nd.Points, blockBytes int64, use func([]byte) error) error {
	item := a.Metadata().DataType.Size()
	per := max(1, int(blockBytes/int64(item)))
	buf := make([]byte, min(per, pts.Len())*item)
	for k := 0; k < pts.Len(); k += per {
		m := min(per, pts.Len()-k)
		batch := nd.Points{Rank: pts.Rank, Coords: pts.Coords[k*pts.Rank : (k+m)*pts.Rank]}
		out := buf[:m*item]
		if err := a.ReadPointsInto(ctx, out, batch); err != nil {
			return err
		}
		if err := use(out); err != nil {
			return err
		}
	}
	return nil
}

// getPoints is get of a coordinate selection: the values of pts, in
// order, as an output of shape (1-d for --points and --mask).
func getPoints(ctx context.Context, a *zarr.Array, pts nd.Points, shape []int, format string, flags map[string]string, stdout, stderr io.Writer, budget int64) error {
	dt := a.Metadata().DataType
	if dt.VarLen() {
		return fmt.Errorf("%w: --points and --mask read fixed-size data types, not %s", errUsage, dt)
	}
	var prog *progress
	if out := flags["o"]; out != "" && out != "-" {
		prog = newProgress(stderr, flags, "get")
		prog.setTotal(int64(pts.Len()) * int64(dt.Size()))
	}
	err := writeOutput(flags["o"], stdout, func(w io.Writer) error {
		enc := newEncoder(w, format, dt, shape)
		if err := enc.begin(); err != nil {
			return err
		}
		err := streamPoints(ctx, a, pts, blockBytes(budget), func(b []byte) error {
			prog.add(int64(len(b)))
			return enc.values(b)
		})
		if err != nil {
			return err
		}
		return enc.end()
	})
	prog.finish(err)
	return err
}
