package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/zarr"
)

// defaultPNGWidth is the most pixels a PNG has along each side unless
// --width says otherwise: larger selections are shown by striding.
const defaultPNGWidth = 1024

// pngHistBins is how many histogram bins the PNG's description holds.
const pngHistBins = 10

// getPNG writes a 2-D selection (or a 3-D one of a single plane) as a PNG
// picture: Matplotlib's viridis over [vmin, vmax] (from the values shown,
// or --vmin/--vmax), NaN and fill values transparent, row 0 at the top. A
// selection wider or taller than --width pixels is shown by striding: every
// s-th row and column, s the smallest step that fits, so only the values
// shown are read (a quick look, not a resampling). The picture's tEXt
// chunks say what it shows: the target and selection, the range, the step
// and statistics of the values shown.
func getPNG(ctx context.Context, a *zarr.Array, sel nd.Selection, target, text string, flags map[string]string, stdout io.Writer, budget int64) error {
	dt := a.Metadata().DataType
	switch dt.Kind() {
	case dtype.Bool, dtype.Int, dtype.Uint, dtype.Float:
	default:
		return fmt.Errorf("%w: --format png draws booleans, integers and real floats, not %s", errUsage, dt)
	}
	shape := sel.Shape()
	if len(shape) == 3 && shape[0] == 1 {
		shape = shape[1:]
	}
	if len(shape) != 2 {
		return fmt.Errorf("%w: --format png draws a 2-D selection; this one has shape %s: index the other dimensions, e.g. '0, :, :'", errUsage, nd.PyShape(sel.Shape()))
	}
	width := defaultPNGWidth
	if v, ok := flags["width"]; ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1<<15 {
			return fmt.Errorf("%w: --width must be a number of pixels from 1 to 32768, not %q", errUsage, v)
		}
		width = n
	}
	vmin, vmax, fixed, err := rangeFlags(flags)
	if err != nil {
		return err
	}
	step := (max(shape[0], shape[1]) + width - 1) / width
	shown, err := strided(sel, step)
	if err != nil {
		return err
	}
	h, w := 1, 1
	if s := shown.Shape(); len(s) >= 2 {
		h, w = s[len(s)-2], s[len(s)-1]
	}
	item := dt.Size()
	if int64(h)*int64(w)*int64(item) > budget {
		return fmt.Errorf("%w: %d × %d values of %d bytes are more than --budget; lower --width", errUsage, h, w, item)
	}
	raw := make([]byte, h*w*item)
	if h*w > 0 {
		if err := a.ReadSelection(ctx, raw, shown); err != nil {
			return err
		}
	}
	fill := a.Metadata().FillValue
	vals := make([]float64, h*w) // NaN: not drawn (NaN or fill)
	st := pngStats{fixed: fixed}
	for i := range vals {
		b := raw[i*item : (i+1)*item]
		v := loadFloat(dt, b)
		switch {
		case math.IsNaN(v):
			st.nan++
			vals[i] = math.NaN()
			continue
		case len(fill) == item && bytes.Equal(b, fill):
			st.fill++
			vals[i] = math.NaN()
			continue
		}
		vals[i] = v
		st.add(v)
	}
	if !fixed {
		vmin, vmax = st.min, st.max
	}
	st.vmin, st.vmax = vmin, vmax
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i, v := range vals {
		if math.IsNaN(v) {
			continue // transparent
		}
		c := viridis[colorIndex(v, vmin, vmax)]
		img.SetNRGBA(i%w, i/w, color.NRGBA{R: c[0], G: c[1], B: c[2], A: 255})
	}
	st.hist(vals)
	var buf bytes.Buffer
	if err := png.Encode(&buf, img); err != nil {
		return err
	}
	desc := st.describe(a, sel.Shape(), []int{h, w}, step, fill)
	out, err := withText(buf.Bytes(), [][2]string{
		{"Title", strings.TrimSpace("zarrcat get " + target + " " + text)},
		{"Software", version()},
		{"Description", desc},
	})
	if err != nil {
		return err
	}
	return writeOutput(flags["o"], stdout, func(wr io.Writer) error {
		_, err := wr.Write(out)
		return err
	})
}

// rangeFlags parses --vmin and --vmax: both or neither.
func rangeFlags(flags map[string]string) (vmin, vmax float64, fixed bool, err error) {
	lo, hasLo := flags["vmin"]
	hi, hasHi := flags["vmax"]
	if !hasLo && !hasHi {
		return 0, 0, false, nil
	}
	if hasLo != hasHi {
		return 0, 0, false, fmt.Errorf("%w: give --vmin and --vmax together (without them the range is the data's)", errUsage)
	}
	vmin, err1 := strconv.ParseFloat(lo, 64)
	vmax, err2 := strconv.ParseFloat(hi, 64)
	if err1 != nil || err2 != nil || math.IsNaN(vmin) || math.IsNaN(vmax) || math.IsInf(vmin, 0) || math.IsInf(vmax, 0) {
		return 0, 0, false, fmt.Errorf("%w: --vmin and --vmax must be finite numbers, not %q and %q", errUsage, lo, hi)
	}
	if vmin > vmax {
		return 0, 0, false, fmt.Errorf("%w: --vmin %s is above --vmax %s", errUsage, lo, hi)
	}
	return vmin, vmax, true, nil
}

// colorIndex maps v to one of viridis' 256 colors as Matplotlib's
// Normalize and colormap do: (v - vmin) / (vmax - vmin) in 256 equal bins,
// values outside the range the end colors, a range of one value color 0.
func colorIndex(v, vmin, vmax float64) int {
	if vmax == vmin {
		return 0
	}
	x := (v - vmin) / (vmax - vmin)
	switch {
	case x < 0:
		return 0
	case x >= 1:
		return 255
	}
	return min(255, int(x*256))
}

// strided returns sel with every step-th element of each dimension kept
// (step 1: sel itself). Index-array dimensions are kept whole, so a
// selection with them cannot be strided.
func strided(sel nd.Selection, step int) (nd.Selection, error) {
	if step <= 1 {
		return sel, nil
	}
	out := make(nd.Selection, len(sel))
	for i, d := range sel {
		if d.Drop || d.Len() <= 1 {
			out[i] = d
			continue
		}
		if d.Index != nil || d.Order != nil {
			return nil, fmt.Errorf("%w: a selection with index arrays is drawn whole: give --width %d or more, or a slice", errUsage, d.Len())
		}
		out[i] = nd.Dim{Start: d.Start, Count: (d.Count + step - 1) / step, Step: d.Step * step}
	}
	return out, nil
}

// pngStats are the statistics of the values a PNG shows.
type pngStats struct {
	n, nan, fill   int
	min, max, mean float64
	m2             float64 // Welford's sum of squared deviations
	fixed          bool
	vmin, vmax     float64
	bins           []int
}

func (s *pngStats) add(v float64) {
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if s.n == 0 || v > s.max {
		s.max = v
	}
	s.n++
	d := v - s.mean
	s.mean += d / float64(s.n)
	s.m2 += d * (v - s.mean)
}

// hist counts the drawn values (NaN: not drawn) in pngHistBins equal bins
// over [min, max], the last one closed.
func (s *pngStats) hist(vals []float64) {
	if s.n == 0 {
		return
	}
	s.bins = make([]int, pngHistBins)
	for _, v := range vals {
		if math.IsNaN(v) {
			continue
		}
		b := pngHistBins - 1
		if s.max > s.min {
			b = min(b, int((v-s.min)/(s.max-s.min)*pngHistBins))
		}
		s.bins[b]++
	}
}

// describe is the PNG's Description text.
func (s *pngStats) describe(a *zarr.Array, selShape, shown []int, step int, fill []byte) string {
	var b strings.Builder
	fmt.Fprintf(&b, "selection of shape %s, %s; shown %d x %d", nd.PyShape(selShape), a.Metadata().DataType, shown[1], shown[0])
	if step > 1 {
		fmt.Fprintf(&b, " (every %d-th row and column)", step)
	}
	src := "the values shown"
	if s.fixed {
		src = "--vmin/--vmax"
	}
	fmt.Fprintf(&b, "\ncolormap viridis over [%s, %s] (from %s)\n", fmtG(s.vmin), fmtG(s.vmax), src)
	fillText := "-"
	if len(fill) > 0 {
		fillText = string(a.Metadata().FillValueJSON)
	}
	fmt.Fprintf(&b, "transparent: %d NaN, %d fill value (%s)\n", s.nan, s.fill, fillText)
	fmt.Fprintf(&b, "count %d\n", s.n)
	if s.n > 0 {
		fmt.Fprintf(&b, "min %s\nmax %s\nmean %s\nstd %s\n", fmtG(s.min), fmtG(s.max), fmtG(s.mean), fmtG(math.Sqrt(s.m2/float64(s.n))))
		width := (s.max - s.min) / pngHistBins
		for i, c := range s.bins {
			end := ")"
			if i == len(s.bins)-1 {
				end = "]"
			}
			fmt.Fprintf(&b, "[%s, %s%s %d\n", fmtG(s.min+float64(i)*width), fmtG(s.min+float64(i+1)*width), end, c)
		}
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func fmtG(f float64) string { return strconv.FormatFloat(f, 'g', 7, 64) }

// withText inserts tEXt chunks (keyword, Latin-1 text) after the IHDR
// chunk of the PNG p: image/png writes none.
func withText(p []byte, texts [][2]string) ([]byte, error) {
	const sigLen, ihdrLen = 8, 8 + 13 + 4
	if len(p) < sigLen+ihdrLen || string(p[sigLen+4:sigLen+8]) != "IHDR" {
		return nil, errors.New("png: no IHDR chunk to follow")
	}
	out := append([]byte(nil), p[:sigLen+ihdrLen]...)
	for _, t := range texts {
		data := append([]byte(t[0]), 0)
		for _, r := range t[1] {
			if r > 0xff {
				r = '?' // tEXt is Latin-1
			}
			data = append(data, byte(r))
		}
		out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
		chunk := append([]byte("tEXt"), data...)
		out = append(out, chunk...)
		out = binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(chunk))
	}
	return append(out, p[sigLen+ihdrLen:]...), nil
}
