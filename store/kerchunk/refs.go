package kerchunk

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strings"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zstd"

	"github.com/gozarr/gozarr/store"
)

// entry is one reference: inline bytes, or a range (or the whole) of the
// object at url.
type entry struct {
	inline []byte // the value, when url is ""
	url    string
	off, n int64
	whole  bool
}

// limits bound what a references file may make.
type limits struct {
	maxKeys int   // references, gen expansions included
	maxSize int64 // bytes of the file, decompressed
}

// decompress returns data, or its decompression when it is a gzip or zstd
// stream (kerchunk recommends compressing large reference files), reading
// at most max bytes.
func decompress(data []byte, max int64) ([]byte, error) {
	var r io.Reader
	switch {
	case len(data) >= 4 && bytes.Equal(data[:4], []byte{0x28, 0xb5, 0x2f, 0xfd}):
		d, err := zstd.NewReader(bytes.NewReader(data), zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(uint64(max)+1))
		if err != nil {
			return nil, fmt.Errorf("%w: zstd: %w", ErrInvalid, err)
		}
		defer d.Close()
		r = d
	case len(data) >= 2 && data[0] == 0x1f && data[1] == 0x8b:
		g, err := gzip.NewReader(bytes.NewReader(data))
		if err != nil {
			return nil, fmt.Errorf("%w: gzip: %w", ErrInvalid, err)
		}
		r = g
	default:
		return data, nil
	}
	out, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, fmt.Errorf("%w: decompressing: %w", ErrInvalid, err)
	}
	if int64(len(out)) > max {
		return nil, fmt.Errorf("%w: more than %d bytes decompressed (raise WithMaxSize)", ErrTooLarge, max)
	}
	return out, nil
}

// parse reads a kerchunk JSON references document (version 0 or 1) into
// its entries.
func parse(data []byte, lim limits) (map[string]entry, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%w: not a JSON object: %w", ErrInvalid, err)
	}
	p := &refParser{out: map[string]entry{}, lim: lim, urls: map[string]string{}}
	v, ok := top["version"]
	if !ok {
		// Version 0: the object is the references.
		if len(top) > lim.maxKeys {
			return nil, fmt.Errorf("%w: %d references, more than %d (raise WithMaxKeys)", ErrTooLarge, len(top), lim.maxKeys)
		}
		for k, raw := range top {
			if err := p.ref(k, raw, false); err != nil {
				return nil, err
			}
		}
		return p.out, nil
	}
	if string(bytes.TrimSpace(v)) != "1" {
		return nil, fmt.Errorf("%w: version %s (want 1, or no version for version 0)", ErrInvalid, v)
	}
	for k := range top {
		switch k {
		case "version", "templates", "gen", "refs":
		default:
			return nil, fmt.Errorf("%w: unknown top-level field %q of a version 1 document", ErrInvalid, k)
		}
	}
	if raw, ok := top["templates"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &p.r.templates); err != nil {
			return nil, fmt.Errorf("%w: templates: %w", ErrInvalid, err)
		}
	}
	var refs map[string]json.RawMessage
	if raw, ok := top["refs"]; ok && !isNull(raw) {
		if err := json.Unmarshal(raw, &refs); err != nil {
			return nil, fmt.Errorf("%w: refs: %w", ErrInvalid, err)
		}
	}
	if len(refs) > lim.maxKeys {
		return nil, fmt.Errorf("%w: %d references, more than %d (raise WithMaxKeys)", ErrTooLarge, len(refs), lim.maxKeys)
	}
	for k, raw := range refs {
		if err := p.ref(k, raw, len(p.r.templates) > 0); err != nil {
			return nil, err
		}
	}
	if raw, ok := top["gen"]; ok && !isNull(raw) {
		var gens []genSpec
		if err := json.Unmarshal(raw, &gens); err != nil {
			return nil, fmt.Errorf("%w: gen: %w", ErrInvalid, err)
		}
		for i := range gens {
			if err := p.gen(&gens[i]); err != nil {
				return nil, fmt.Errorf("gen[%d]: %w", i, err)
			}
		}
	}
	return p.out, nil
}

func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

type refParser struct {
	out  map[string]entry
	lim  limits
	r    renderer
	urls map[string]string // interned URLs: many references share one
}

func (p *refParser) intern(u string) string {
	if s, ok := p.urls[u]; ok {
		return s
	}
	p.urls[u] = u
	return u
}

func (p *refParser) add(k string, e entry) error {
	if err := store.ValidateKey(k); err != nil {
		return fmt.Errorf("%w: reference key: %w", ErrInvalid, err)
	}
	if len(p.out) >= p.lim.maxKeys {
		if _, dup := p.out[k]; !dup {
			return fmt.Errorf("%w: more than %d references (raise WithMaxKeys)", ErrTooLarge, p.lim.maxKeys)
		}
	}
	p.out[k] = e
	return nil
}

// ref decodes one reference value; render renders templates in its URL.
func (p *refParser) ref(k string, raw json.RawMessage, render bool) error {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return fmt.Errorf("%w: %q: empty value", ErrInvalid, k)
	}
	switch raw[0] {
	case '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return fmt.Errorf("%w: %q: %w", ErrInvalid, k, err)
		}
		b := []byte(s)
		if rest, ok := strings.CutPrefix(s, "base64:"); ok {
			var err error
			if b, err = base64.StdEncoding.DecodeString(rest); err != nil {
				return fmt.Errorf("%w: %q: base64: %w", ErrInvalid, k, err)
			}
		}
		return p.add(k, entry{inline: b})
	case '{':
		// An inline JSON document (".zarray": {...}), kept as written.
		return p.add(k, entry{inline: bytes.Clone(raw)})
	case '[':
		var parts []json.RawMessage
		if err := json.Unmarshal(raw, &parts); err != nil {
			return fmt.Errorf("%w: %q: %w", ErrInvalid, k, err)
		}
		if len(parts) != 1 && len(parts) != 3 {
			return fmt.Errorf("%w: %q: a reference of %d items (want [url] or [url, offset, length])", ErrInvalid, k, len(parts))
		}
		var u string
		if err := json.Unmarshal(parts[0], &u); err != nil || u == "" {
			return fmt.Errorf("%w: %q: the URL %s is not a non-empty string", ErrInvalid, k, parts[0])
		}
		if render {
			var err error
			if u, err = p.r.render(u, nil); err != nil {
				return fmt.Errorf("%q: %w", k, err)
			}
		}
		e := entry{url: p.intern(u), whole: len(parts) == 1}
		if !e.whole {
			var err error
			if e.off, err = nonNegative(parts[1]); err != nil {
				return fmt.Errorf("%w: %q: offset: %w", ErrInvalid, k, err)
			}
			if e.n, err = nonNegative(parts[2]); err != nil {
				return fmt.Errorf("%w: %q: length: %w", ErrInvalid, k, err)
			}
			if e.off > math.MaxInt64-e.n {
				return fmt.Errorf("%w: %q: offset %d + length %d overflows", ErrInvalid, k, e.off, e.n)
			}
		}
		return p.add(k, e)
	}
	return fmt.Errorf("%w: %q: a value of %.20s (want a string, an object or a list)", ErrInvalid, k, raw)
}

// nonNegative decodes a JSON integer >= 0.
func nonNegative(raw json.RawMessage) (int64, error) {
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		return 0, fmt.Errorf("%s is not a number", raw)
	}
	i, err := n.Int64()
	if err != nil || i < 0 {
		return 0, fmt.Errorf("%s is not an integer >= 0", raw)
	}
	return i, nil
}

// genSpec is one "gen" item of a version 1 document.
type genSpec struct {
	Key        string                     `json:"key"`
	URL        string                     `json:"url"`
	Offset     *json.RawMessage           `json:"offset"`
	Length     *json.RawMessage           `json:"length"`
	Dimensions map[string]json.RawMessage `json:"dimensions"`
}

// dimension is one gen dimension: its name and values.
type dimension struct {
	name string
	vals func(i int64) int64
	n    int64
}

// gen expands g over the cartesian product of its dimensions.
func (p *refParser) gen(g *genSpec) error {
	if g.Key == "" || g.URL == "" {
		return fmt.Errorf("%w: gen needs a key and a url", ErrInvalid)
	}
	if (g.Offset == nil) != (g.Length == nil) {
		return fmt.Errorf("%w: gen has an offset without a length or the other way round", ErrInvalid)
	}
	if len(g.Dimensions) == 0 {
		return fmt.Errorf("%w: gen without dimensions", ErrInvalid)
	}
	names := make([]string, 0, len(g.Dimensions))
	for name := range g.Dimensions {
		names = append(names, name)
	}
	sort.Strings(names) // the product's order does not matter: each item names its key
	dims := make([]dimension, len(names))
	total := int64(1)
	for i, name := range names {
		d, err := parseDimension(name, g.Dimensions[name])
		if err != nil {
			return err
		}
		dims[i] = d
		if d.n == 0 {
			return nil
		}
		if total > int64(p.lim.maxKeys)/d.n {
			return fmt.Errorf("%w: gen expands to more than %d references (raise WithMaxKeys)", ErrTooLarge, p.lim.maxKeys)
		}
		total *= d.n
	}
	if int64(len(p.out))+total > int64(p.lim.maxKeys) {
		return fmt.Errorf("%w: gen expands to more than %d references (raise WithMaxKeys)", ErrTooLarge, p.lim.maxKeys)
	}
	offT, lenT := "", ""
	if g.Offset != nil {
		var err error
		if offT, err = jinjaOrInt(*g.Offset); err != nil {
			return fmt.Errorf("offset: %w", err)
		}
		if lenT, err = jinjaOrInt(*g.Length); err != nil {
			return fmt.Errorf("length: %w", err)
		}
	}
	idx := make([]int64, len(dims))
	vars := make(map[string]value, len(dims))
	for {
		for i, d := range dims {
			vars[d.name] = value{i: d.vals(idx[i]), isInt: true}
		}
		key, err := p.r.render(g.Key, vars)
		if err != nil {
			return err
		}
		u, err := p.r.render(g.URL, vars)
		if err != nil {
			return err
		}
		e := entry{url: p.intern(u), whole: g.Offset == nil}
		if !e.whole {
			if e.off, err = p.renderInt(offT, vars); err != nil {
				return fmt.Errorf("offset: %w", err)
			}
			if e.n, err = p.renderInt(lenT, vars); err != nil {
				return fmt.Errorf("length: %w", err)
			}
			if e.off > math.MaxInt64-e.n {
				return fmt.Errorf("%w: %q: offset %d + length %d overflows", ErrInvalid, key, e.off, e.n)
			}
		}
		if err := p.add(key, e); err != nil {
			return err
		}
		// Next index, last dimension fastest.
		i := len(dims) - 1
		for ; i >= 0; i-- {
			idx[i]++
			if idx[i] < dims[i].n {
				break
			}
			idx[i] = 0
		}
		if i < 0 {
			return nil
		}
	}
}

// jinjaOrInt returns a gen offset or length as a jinja-str: the spec has
// strings, and writers also put plain integers.
func jinjaOrInt(raw json.RawMessage) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		return s, nil
	}
	n, err := nonNegative(raw)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return fmt.Sprint(n), nil
}

func (p *refParser) renderInt(t string, vars map[string]value) (int64, error) {
	s, err := p.r.render(t, vars)
	if err != nil {
		return 0, err
	}
	var n int64
	if _, err := fmt.Sscan(strings.TrimSpace(s), &n); err != nil || n < 0 || fmt.Sprint(n) != strings.TrimSpace(s) {
		return 0, fmt.Errorf("%w: %q renders %q, not an integer >= 0", ErrInvalid, t, s)
	}
	return n, nil
}

// parseDimension decodes {"start", "stop", "step"} (Python's range) or a
// list of integers.
func parseDimension(name string, raw json.RawMessage) (dimension, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '[' {
		var vals []int64
		if err := json.Unmarshal(raw, &vals); err != nil {
			return dimension{}, fmt.Errorf("%w: dimension %q: %w", ErrInvalid, name, err)
		}
		return dimension{name: name, n: int64(len(vals)), vals: func(i int64) int64 { return vals[i] }}, nil
	}
	var r struct {
		Start *int64 `json:"start"`
		Stop  *int64 `json:"stop"`
		Step  *int64 `json:"step"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || r.Stop == nil {
		return dimension{}, fmt.Errorf("%w: dimension %q: want {\"stop\": n} (with optional start and step) or a list of integers", ErrInvalid, name)
	}
	start, stop, step := int64(0), *r.Stop, int64(1)
	if r.Start != nil {
		start = *r.Start
	}
	if r.Step != nil {
		step = *r.Step
	}
	if step == 0 {
		return dimension{}, fmt.Errorf("%w: dimension %q: step 0", ErrInvalid, name)
	}
	// Python's len(range(start, stop, step)), in big steps to avoid overflow.
	var n int64
	switch {
	case step > 0 && stop > start:
		n = int64((uint64(stop-start)-1)/uint64(step)) + 1
	case step < 0 && stop < start:
		n = int64((uint64(start-stop)-1)/uint64(-step)) + 1
	}
	if n < 0 {
		return dimension{}, fmt.Errorf("%w: dimension %q: too many values", ErrTooLarge, name)
	}
	return dimension{name: name, n: n, vals: func(i int64) int64 { return start + i*step }}, nil
}
