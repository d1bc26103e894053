package main

import (
	"bufio"
	"bytes"
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

// maxPointsFileBytes bounds a --mask file (read whole; --points files
// are read in parts, whatever their size).
const maxPointsFileBytes = 1 << 30

// readPointsFile reads the points of --points: a .npy integer array of
// shape (n, rank) (or (n,) for a 1-d array), or text with one point a line,
// coordinates separated by spaces or commas ('#' starts a comment).
func readPointsFile(path string, shape []int) (pointSet, error) {
	rank := len(shape)
	if rank == 0 {
		return pointSet{}, fmt.Errorf("%w: a 0-d array has no coordinates to select", nd.ErrInvalidSelection)
	}
	if strings.HasSuffix(path, ".npy") {
		arr, off, err := npy.ReadFileHeader(path)
		if err != nil {
			return pointSet{}, err
		}
		if arr.FortranOrder {
			return pointSet{}, fmt.Errorf("%w: --points %s: Fortran-ordered .npy (write it in C order)", errUsage, path)
		}
		n, ok := 0, false
		switch {
		case len(arr.Shape) == 2 && arr.Shape[1] == rank:
			n, ok = arr.Shape[0], true
		case len(arr.Shape) == 1 && rank == 1:
			n, ok = arr.Shape[0], true
		}
		if !ok {
			return pointSet{}, fmt.Errorf("%w: --points %s: shape %v, want (n, %d)", errUsage, path, arr.Shape, rank)
		}
		get, size, err := intReader(arr.Descr)
		if err != nil {
			return pointSet{}, fmt.Errorf("%w: --points %s: %v", errUsage, path, err)
		}
		// Like a text file, checked whole first and read again batch by
		// batch: its points are never all in memory (they took 32 bytes
		// each, the file's and an []int copy).
		q := &npyPoints{path: path, offset: off, size: size, get: get}
		ps := pointSet{npy: q, n: n, rank: rank, shape: shape}
		err = q.each(ps, 1<<16, func(k int, c []int) error {
			for j, v := range c {
				if d := j % rank; v < -shape[d] || v >= shape[d] {
					return fmt.Errorf("%w: index %d of dimension %d (length %d), point %d", nd.ErrOutOfBounds, v, d, shape[d], k+j/rank)
				}
			}
			return nil
		})
		return ps, err
	}
	f, err := os.Open(path)
	if err != nil {
		return pointSet{}, err
	}
	defer f.Close()
	// A regular file is checked whole first (its points counted, each in
	// bounds) and read again batch by batch as the values are read: its
	// points are never all in memory. A pipe is read once, into memory.
	if info, err := f.Stat(); err == nil && info.Mode().IsRegular() {
		k := 0 // the point's number in the file, from 0
		n, err := scanPoints(f, path, rank, shape, func(c []int) error {
			for d, v := range c {
				if v < -shape[d] || v >= shape[d] {
					return fmt.Errorf("%w: index %d of dimension %d (length %d), point %d", nd.ErrOutOfBounds, v, d, shape[d], k)
				}
			}
			k++
			return nil
		})
		if err != nil {
			return pointSet{}, err
		}
		return pointSet{file: path, n: n, rank: rank, shape: shape}, nil
	}
	flat := []int{}
	if _, err := scanPoints(f, path, rank, shape, func(c []int) error {
		flat = append(flat, c...)
		return nil
	}); err != nil {
		return pointSet{}, err
	}
	pts, err := nd.CheckPoints(nd.Points{Rank: rank, Coords: flat}, shape)
	return pointSet{mem: pts}, err
}

// pointSet is the points of a coordinate selection: in memory, in a
// --points text file (checked, n points), read again batch by batch, or a
// selection text's index arrays that broadcast (NumPy's pointwise
// reading), listed batch by batch.
type pointSet struct {
	mem     nd.Points
	file    string
	npy     *npyPoints // a --points .npy file, checked, n points
	n, rank int
	shape   []int
	pw      *nd.Pointwise
}

// npyPoints is a --points .npy file read in parts: its data starts at
// offset, size bytes an integer that get decodes.
type npyPoints struct {
	path   string
	offset int64
	size   int
	get    func([]byte) (int, string)
}

// each reads the n points of p's .npy file in order, at most per at a
// time, and hands visit each batch's coordinates (valid until it returns)
// with the number of its first point. A coordinate past int is an error
// naming it as the file holds it.
func (q *npyPoints) each(p pointSet, per int, visit func(k int, coords []int) error) error {
	f, err := os.Open(q.path)
	if err != nil {
		return err
	}
	defer f.Close()
	per = max(1, min(per, p.n))
	buf := make([]byte, per*p.rank*q.size)
	coords := make([]int, per*p.rank)
	for k := 0; k < p.n; k += per {
		m := min(per, p.n-k)
		b := buf[:m*p.rank*q.size]
		if _, err := f.ReadAt(b, q.offset+int64(k)*int64(p.rank*q.size)); err != nil {
			return fmt.Errorf("--points %s: %w", q.path, err)
		}
		c := coords[:m*p.rank]
		for j := range c {
			v, exact := q.get(b[j*q.size:])
			if exact != "" { // past int: say the value in the file, not a clamped one
				return fmt.Errorf("%w: index %s of dimension %d (length %d), point %d", nd.ErrOutOfBounds, exact, j%p.rank, p.shape[j%p.rank], k+j/p.rank)
			}
			c[j] = v
		}
		if err := visit(k, c); err != nil {
			return err
		}
	}
	return nil
}

// Len returns the number of points.
func (p pointSet) Len() int {
	if p.pw != nil {
		return p.pw.Len()
	}
	if p.file != "" || p.npy != nil {
		return p.n
	}
	return p.mem.Len()
}

// batches hands the points to use in order, at most per at a time (the
// batch is valid until use returns).
func (p pointSet) batches(per int, use func(nd.Points) error) error {
	if p.pw != nil {
		var buf []int
		for k := 0; k < p.pw.Len(); k += per {
			batch := p.pw.Points(k, min(per, p.pw.Len()-k), buf)
			buf = batch.Coords
			if err := use(batch); err != nil {
				return err
			}
		}
		return nil
	}
	if p.npy != nil {
		return p.npy.each(p, per, func(_ int, c []int) error {
			pts, err := nd.CheckPoints(nd.Points{Rank: p.rank, Coords: c}, p.shape)
			if err != nil {
				return err
			}
			return use(pts)
		})
	}
	if p.file == "" {
		for k := 0; k < p.mem.Len(); k += per {
			m := min(per, p.mem.Len()-k)
			if err := use(nd.Points{Rank: p.mem.Rank, Coords: p.mem.Coords[k*p.mem.Rank : (k+m)*p.mem.Rank]}); err != nil {
				return err
			}
		}
		return nil
	}
	f, err := os.Open(p.file)
	if err != nil {
		return err
	}
	defer f.Close()
	batch := make([]int, 0, min(per, p.n)*p.rank)
	var useErr error // use's own, not said to be about a line of the file
	flush := func() error {
		pts, err := nd.CheckPoints(nd.Points{Rank: p.rank, Coords: batch}, p.shape)
		if err == nil {
			if useErr = use(pts); useErr != nil {
				err = errStopPoints
			}
		}
		batch = batch[:0]
		return err
	}
	n, err := scanPoints(f, p.file, p.rank, p.shape, func(c []int) error {
		batch = append(batch, c...)
		if len(batch) == cap(batch) {
			return flush()
		}
		return nil
	})
	if err == nil && len(batch) > 0 {
		err = flush()
	}
	if useErr != nil {
		return useErr
	}
	if err == nil && n != p.n {
		err = fmt.Errorf("--points %s: %d points, %d when it was checked: the file changed while it was read", p.file, n, p.n)
	}
	return err
}

// errStopPoints stops a scan of a --points file when reading a batch of
// its points failed.
var errStopPoints = errors.New("stop")

// maxPointsLine is the longest line of a --points text file.
const maxPointsLine = 64 << 10

// scanPoints reads the points of a --points text file from r: one a line,
// rank integers separated by spaces, tabs or commas; blank lines and "#"
// comments skipped. It hands each point's coordinates to visit (a slice
// valid until visit returns) and returns how many there are.
func scanPoints(r io.Reader, path string, rank int, shape []int, visit func([]int) error) (int, error) {
	br := bufio.NewReaderSize(r, maxPointsLine)
	coords := make([]int, rank)
	n, line := 0, 0
	for {
		text, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			return 0, fmt.Errorf("%w: --points %s line %d: longer than %d bytes", errUsage, path, line+1, maxPointsLine)
		}
		if len(text) == 0 && err != nil {
			if err == io.EOF {
				break
			}
			return 0, err
		}
		line++
		if i := bytes.IndexByte(text, '#'); i >= 0 {
			text = text[:i]
		}
		fields := 0
		for len(text) > 0 {
			i := 0
			for i < len(text) && isPointSep(text[i]) {
				i++
			}
			j := i
			for j < len(text) && !isPointSep(text[j]) {
				j++
			}
			if i == j {
				break
			}
			if fields < rank {
				v, err := strconv.Atoi(string(text[i:j]))
				if errors.Is(err, strconv.ErrRange) {
					return 0, fmt.Errorf("--points %s line %d: %w: index %s of dimension %d (length %d)", path, line, nd.ErrOutOfBounds, text[i:j], fields, shape[fields])
				}
				if err != nil {
					return 0, fmt.Errorf("%w: --points %s line %d: %q is not an integer", errUsage, path, line, text[i:j])
				}
				coords[fields] = v
			}
			fields++
			text = text[j:]
		}
		if fields != 0 && fields != rank {
			return 0, fmt.Errorf("%w: --points %s line %d: %s for an array of %s", errUsage, path, line, plural(fields, "coordinate"), plural(rank, "dimension"))
		}
		if fields != 0 {
			if err := visit(coords); err != nil {
				return 0, fmt.Errorf("--points %s line %d: %w", path, line, err)
			}
			n++
		}
		if err == io.EOF {
			break
		}
	}
	return n, nil
}

// isPointSep reports whether c separates the coordinates of a point.
func isPointSep(c byte) bool {
	return c == ' ' || c == '\t' || c == ',' || c == '\r' || c == '\n'
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
		return nd.Points{}, fmt.Errorf("--mask %s: shape %s, the array's is %s: %w", path, nd.PyShape(arr.Shape), nd.PyShape(shape), nd.ErrInvalidSelection)
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
		return nil, fmt.Errorf("%w: %s is %d bytes, more than the %d a mask file may have", errUsage, path, fi.Size(), maxPointsFileBytes)
	}
	return npy.ReadFile(path)
}

// intReader returns a decoder of one integer of the .npy descr (any
// little-endian integer type; dtype.NumberOf reads it): the value, or its
// digits when an int cannot hold it; and the integer's size in bytes.
func intReader(descr string) (get func([]byte) (int, string), size int, err error) {
	dt, big, err := dtype.ParseNumpy(descr)
	if err != nil {
		return nil, 0, err
	}
	if big || (dt.Kind() != dtype.Int && dt.Kind() != dtype.Uint) {
		return nil, 0, fmt.Errorf("dtype %s: want a little-endian integer type", descr)
	}
	return func(b []byte) (int, string) {
		v, _ := dtype.NumberOf(dt, b[:dt.Size()])
		if i, ok := v.Int(); ok && i >= math.MinInt && i <= math.MaxInt {
			return int(i), ""
		}
		return 0, v.String()
	}, dt.Size(), nil
}

// pointsSelection returns the coordinate selection --points or --mask asks
// for, and whether there is one; both, or one with a SELECTION, is a
// usage error.
func pointsSelection(a *zarr.Array, flags map[string]string, pos []string) (pointSet, bool, error) {
	pf, hasP := flags["points"]
	mf, hasM := flags["mask"]
	if !hasP && !hasM {
		return pointSet{}, false, nil
	}
	if hasP && hasM || len(pos) > 1 {
		return pointSet{}, false, fmt.Errorf("%w: --points, --mask and a SELECTION exclude each other", errUsage)
	}
	if _, ok := flags["blocks"]; ok {
		return pointSet{}, false, fmt.Errorf("%w: --blocks selects with a SELECTION, not --points or --mask", errUsage)
	}
	var pts pointSet
	var err error
	if hasP {
		pts, err = readPointsFile(pf, a.Shape())
	} else {
		pts.mem, err = readMaskFile(mf, a.Shape())
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
		if errors.Is(err, npy.ErrFormat) || errors.Is(err, npy.ErrUnsupported) {
			// A file that is no .npy is a mistake in the flag's argument
			// (exit status 2), as a bad line of a --points text file is.
			return pts, true, &usageError{msg: msg, err: err}
		}
		err = &targetError{msg: msg, err: err}
	}
	return pts, true, err
}

// pointOverhead bounds what reading one point of a batch holds besides its
// value (the engine's ordering of the batch by chunk): batches are cut so
// that it stays within blockBytes too.
const pointOverhead = 128

// streamPoints reads pts in order, in batches of at most blockBytes of
// values and of pointOverhead a point, and hands each batch's values to
// use (valid until it returns).
func streamPoints(ctx context.Context, a *zarr.Array, pts pointSet, blockBytes int64, use func([]byte) error) error {
	item := a.Metadata().DataType.Size()
	per := max(1, int(blockBytes/int64(item+pointOverhead)))
	buf := make([]byte, min(per, pts.Len())*item)
	if len(a.Shape()) == 0 && len(buf) > 0 {
		// A 0-d array's points (NumPy's a[None]) have no coordinates
		// to count them by: its element, as many times as there are.
		if err := a.ReadPointsSelection(ctx, buf, nd.Points{}); err != nil {
			return err
		}
		return use(buf)
	}
	return pts.batches(per, func(batch nd.Points) error {
		out := buf[:batch.Len()*item]
		if err := a.ReadPointsSelection(ctx, out, batch); err != nil {
			return err
		}
		return use(out)
	})
}

func getPoints(ctx context.Context, a *zarr.Array, pts pointSet, shape []int, format string, flags map[string]string, stdout, stderr io.Writer, budget int64) error {
	dt := a.Metadata().DataType
	if dt.VarLen() {
		return fmt.Errorf("%w: points (--points, --mask, or index arrays that broadcast, NumPy's pointwise reading) read fixed-size data types, not %s", errUsage, dt)
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
