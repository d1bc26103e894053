package pcodec

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync"
	"unsafe"

	"github.com/gozarr/gozarr/codecs"
)

var inPool = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// scratchPool holds the word buffers decodePage's latent arrays live in.
var scratchPool = sync.Pool{New: func() any { return new([]uint64) }}

// scratch is a set of pooled latent arrays of one page.
type scratch []*[]uint64

// get returns a zeroed []L of n elements from the pool.
func get[L latent](sc *scratch, n int) []L {
	var z L
	words := (n*int(unsafe.Sizeof(z)) + 7) / 8
	bp := scratchPool.Get().(*[]uint64)
	if cap(*bp) < max(words, 1) {
		*bp = make([]uint64, max(words, 1))
	}
	buf := (*bp)[:max(words, 1)]
	clear(buf)
	*sc = append(*sc, bp)
	return unsafe.Slice((*L)(unsafe.Pointer(&buf[0])), n)
}

func (sc scratch) release() {
	for _, bp := range sc {
		scratchPool.Put(bp)
	}
}

// Decompress decodes the standalone pcodec stream src (what numcodecs'
// PCodec writes) of numbers of type t into dst, which holds exactly the
// numbers expected, little-endian: len(dst)/size numbers. A stream of
// another number type, or of more or fewer numbers, is codecs.ErrCorrupt,
// detected before any allocation that depends on counts in the stream
// (the scratch memory used is bounded by len(dst) and len(src)).
// Decompress is safe for concurrent use.
func Decompress(dst, src []byte, t NumberType) error {
	w := t.Bits()
	if w == 0 {
		return fmt.Errorf("%w: pcodec: unknown number type %d", codecs.ErrInvalidConfig, byte(t))
	}
	size := int(w / 8)
	if len(dst)%size != 0 {
		return fmt.Errorf("%w: pcodec: output of %d bytes is not a whole number of %s", codecs.ErrInvalidConfig, len(dst), t)
	}
	bp := inPool.Get().(*[]byte)
	defer inPool.Put(bp)
	need := len(src) + readPadding
	if cap(*bp) < need {
		*bp = make([]byte, need)
	}
	buf := (*bp)[:need]
	copy(buf, src)
	clear(buf[len(src):])
	r := &bitReader{buf: buf, end: uint(len(src)) * 8}
	return decompress(r, dst, t, len(dst)/size)
}

func decompress(r *bitReader, dst []byte, t NumberType, n int) error {
	if r.end < 40 || string(r.buf[:4]) != magic {
		return corrupt("not a pcodec standalone stream (no \"pco!\" header)")
	}
	r.pos = 32
	sv := int(r.read(8))
	major := sv
	if sv >= 2 {
		if sv > maxStandaloneVer {
			return corrupt("standalone version %d is newer than %d", sv, maxStandaloneVer)
		}
		if sv >= 3 {
			if ut := NumberType(r.read(8)); ut != 0 && ut != t {
				return corrupt("stream holds %s numbers, the array %s", ut, t)
			}
		}
		power := uint(r.read(bitsVarintPower)) + 1
		_ = r.read64(power) // n_hint: untrusted, unused
		if err := r.align("size hint"); err != nil {
			return err
		}
		major = int(r.read(8))
		if major >= 4 {
			_ = r.read(8) // minor version: additions this reader may lack are refused where met
		}
	}
	if major > maxFormatMajor {
		return corrupt("format version %d is newer than %d", major, maxFormatMajor)
	}
	size := int(t.Bits() / 8)
	off := 0
	for {
		if err := r.check("header"); err != nil {
			return err
		}
		tb := r.read(8)
		if r.pos > r.end {
			return corrupt("truncated: no termination byte after %d of %d numbers", off, n)
		}
		if tb == terminationByte {
			break
		}
		if NumberType(tb) != t {
			return corrupt("chunk holds %s numbers, the array %s", NumberType(tb), t)
		}
		cn := int(r.read(bitsChunkN)) + 1
		if cn > n-off {
			return corrupt("chunk of %d numbers after %d exceeds the %d expected", cn, off, n)
		}
		m, err := readChunkMeta(r, major, t)
		if err != nil {
			return err
		}
		out := dst[off*size : (off+cn)*size]
		switch t.Bits() {
		case 8:
			err = decodePage[uint8](r, m, t, out, cn)
		case 16:
			err = decodePage[uint16](r, m, t, out, cn)
		case 32:
			err = decodePage[uint32](r, m, t, out, cn)
		default:
			err = decodePage[uint64](r, m, t, out, cn)
		}
		if err != nil {
			return err
		}
		off += cn
	}
	if off != n {
		return corrupt("stream holds %d numbers, the chunk %d", off, n)
	}
	return nil
}

// node is one tANS decoding table entry.
type node struct {
	next uint16 // base of the next state index
	bits uint8  // bits to read for the next state
	off  uint8  // offset bits of this state's bin
}

// varDec decodes one latent variable of a page.
type varDec[L latent] struct {
	nodes  []node
	lowers []L
	states [ansInterleave]uint32
	maxOff uint
	out    []L
	offs   [batchN]uint8
}

// newVarDec builds the tANS decoding table of v (spread_state_tokens).
func newVarDec[L latent](v *latentVar, out []L) (*varDec[L], error) {
	size := uint32(1) << v.ansLog
	weights := make([]uint32, max(len(v.bins), 1))
	if len(v.bins) == 0 {
		weights[0] = 1
	}
	total := uint32(0)
	for i, b := range v.bins {
		weights[i] = b.weight
		total += b.weight
	}
	if len(v.bins) == 0 {
		total = 1
	}
	if total != size {
		return nil, corrupt("bin weights sum to %d, the ANS table has %d states", total, size)
	}
	syms := make([]uint16, size)
	stride := 3 * size / 5
	if stride%2 == 0 {
		stride++
	}
	step := uint32(0)
	for s, wt := range weights {
		for range wt {
			syms[(stride*step)&(size-1)] = uint16(s)
			step++
		}
	}
	d := &varDec[L]{nodes: make([]node, size), lowers: make([]L, size), out: out}
	xs := weights
	for i, s := range syms {
		x := xs[s]
		nb := uint(bits.LeadingZeros32(x) - bits.LeadingZeros32(size))
		d.nodes[i].next = uint16((x << nb) - size)
		d.nodes[i].bits = uint8(nb)
		if int(s) < len(v.bins) {
			b := v.bins[s]
			d.nodes[i].off = b.off
			d.lowers[i] = L(b.lower)
			d.maxOff = max(d.maxOff, uint(b.off))
		}
		xs[s]++
	}
	return d, nil
}

// readBatch decodes k latents into d.out[at:at+k]: k tANS symbols, then
// their k offsets.
func (d *varDec[L]) readBatch(r *bitReader, at, k int) {
	if k == 0 {
		return
	}
	out := d.out[at : at+k]
	offs := d.offs[:k]
	buf := r.buf
	pos := r.pos
	nodes, lowers := d.nodes, d.lowers
	s0, s1, s2, s3 := d.states[0], d.states[1], d.states[2], d.states[3]
	i := 0
	if len(nodes) > 1 {
		for ; i+4 <= k; i += 4 {
			w := binary.LittleEndian.Uint64(buf[pos>>3:]) >> (pos & 7)
			n0 := nodes[s0]
			out[i], offs[i] = lowers[s0], n0.off
			s0 = uint32(n0.next) + uint32(w&(1<<n0.bits-1))
			w >>= n0.bits
			n1 := nodes[s1]
			out[i+1], offs[i+1] = lowers[s1], n1.off
			s1 = uint32(n1.next) + uint32(w&(1<<n1.bits-1))
			w >>= n1.bits
			n2 := nodes[s2]
			out[i+2], offs[i+2] = lowers[s2], n2.off
			s2 = uint32(n2.next) + uint32(w&(1<<n2.bits-1))
			w >>= n2.bits
			n3 := nodes[s3]
			out[i+3], offs[i+3] = lowers[s3], n3.off
			s3 = uint32(n3.next) + uint32(w&(1<<n3.bits-1))
			pos += uint(n0.bits) + uint(n1.bits) + uint(n2.bits) + uint(n3.bits)
		}
		st := [4]uint32{s0, s1, s2, s3}
		for ; i < k; i++ {
			j := i & 3
			w := binary.LittleEndian.Uint64(buf[pos>>3:]) >> (pos & 7)
			nd := nodes[st[j]]
			out[i], offs[i] = lowers[st[j]], nd.off
			st[j] = uint32(nd.next) + uint32(w&(1<<nd.bits-1))
			pos += uint(nd.bits)
		}
		d.states = st
	} else {
		// one state: no tANS bits at all
		l, o := lowers[0], nodes[0].off
		for i := range out {
			out[i], offs[i] = l, o
		}
	}
	switch {
	case d.maxOff == 0:
	case d.maxOff <= 56:
		for i, o := range offs {
			w := binary.LittleEndian.Uint64(buf[pos>>3:]) >> (pos & 7)
			out[i] += L(w & (1<<o - 1))
			pos += uint(o)
		}
	default:
		for i, o := range offs {
			lo := binary.LittleEndian.Uint64(buf[pos>>3:]) >> (pos & 7)
			v := lo & (1<<32 - 1)
			if o > 32 {
				p2 := pos + 32
				hi := binary.LittleEndian.Uint64(buf[p2>>3:]) >> (p2 & 7)
				v |= (hi & (1<<(o-32) - 1)) << 32
			} else {
				v &= 1<<o - 1
			}
			out[i] += L(v)
			pos += uint(o)
		}
	}
	r.pos = pos
}

type batchReader interface {
	readBatch(r *bitReader, at, k int)
	setStates(s [ansInterleave]uint32, tableSize uint32)
}

func (d *varDec[L]) setStates(s [ansInterleave]uint32, _ uint32) { d.states = s }

// viewAs returns dst as a []L when the machine is little-endian and dst is
// aligned for L, else nil.
func viewAs[L latent](dst []byte, n int) []L {
	var z L
	sz := int(unsafe.Sizeof(z))
	if !littleEndian || n == 0 || uintptr(unsafe.Pointer(&dst[0]))%uintptr(sz) != 0 {
		return nil
	}
	return unsafe.Slice((*L)(unsafe.Pointer(&dst[0])), n)
}

var littleEndian = func() bool {
	x := uint16(1)
	return *(*byte)(unsafe.Pointer(&x)) == 1
}()

// decodePage decodes one page of n numbers into dst (n numbers of L's width).
func decodePage[L latent](r *bitReader, m *chunkMeta, t NumberType, dst []byte, n int) error {
	vars := m.vars()
	// page metadata: delta states, then the tANS states
	states := make([][]uint64, len(vars))
	ans := make([][ansInterleave]uint32, len(vars))
	for i, v := range vars {
		if uint(v.stateN)*v.width > r.remaining() {
			return corrupt("page delta state of %d latents does not fit in the %d bits left", v.stateN, r.remaining())
		}
		states[i] = make([]uint64, v.stateN)
		for j := range states[i] {
			states[i][j] = r.read64(v.width)
		}
		for j := range ans[i] {
			ans[i][j] = uint32(r.read(v.ansLog))
		}
	}
	if err := r.align("page metadata"); err != nil {
		return err
	}
	primN := m.primary.stateN
	inBody := max(n-primN, 0)
	for _, v := range vars {
		if len(v.bins) == 0 && inBody > 0 {
			return corrupt("latent variable with no bins and %d latents", inBody)
		}
	}

	var sc scratch
	defer sc.release()
	direct := viewAs[L](dst, n)
	prim := direct
	if prim == nil {
		prim = get[L](&sc, n)
	}
	var sec []L
	var lb, dictIdx []uint32
	readers := make([]batchReader, 0, 3)
	var err error
	if m.lookback != nil {
		lb = get[uint32](&sc, n)
		d, e := newVarDec(m.lookback, lb)
		if e != nil {
			return e
		}
		readers = append(readers, d)
	}
	if m.mode == modeDict {
		dictIdx = get[uint32](&sc, n)
		d, e := newVarDec(m.primary, dictIdx)
		if e != nil {
			return e
		}
		readers = append(readers, d)
	} else {
		d, e := newVarDec(m.primary, prim)
		if e != nil {
			return e
		}
		readers = append(readers, d)
	}
	if m.secondary != nil {
		sec = get[L](&sc, n)
		d, e := newVarDec(m.secondary, sec)
		if e != nil {
			return e
		}
		readers = append(readers, d)
	}
	for i, rd := range readers {
		rd.setStates(ans[i], 0)
	}
	for i, v := range vars {
		for _, s := range ans[i] {
			if s >= 1<<v.ansLog {
				return corrupt("tANS state %d outside a table of %d", s, 1<<v.ansLog)
			}
		}
	}

	for at := 0; at < n; at += batchN {
		rem := n - at
		bn := min(batchN, rem)
		for i, v := range vars {
			var k int
			if v == m.lookback {
				k = min(max(rem-primN, 0), bn)
			} else {
				k = min(batchN, max(rem-v.stateN, 0))
			}
			readers[i].readBatch(r, at, k)
		}
		if err = r.check("page body"); err != nil {
			return err
		}
	}
	if err := r.align("page"); err != nil {
		return err
	}

	// delta decoding
	if m.mode == modeDict {
		if err := undelta(m, m.primary, dictIdx, toLatents[uint32](states[len(vars)-1-b2i(sec != nil)]), lb, n); err != nil {
			return err
		}
	} else if err := undelta(m, m.primary, prim, toLatents[L](states[len(vars)-1-b2i(sec != nil)]), lb, n); err != nil {
		return err
	}
	if sec != nil {
		if err := undelta(m, m.secondary, sec, toLatents[L](states[len(vars)-1]), lb, n); err != nil {
			return err
		}
	}

	// join the latents into numbers
	switch m.mode {
	case modeIntMult:
		base := L(m.base)
		for i := range prim {
			prim[i] = prim[i]*base + sec[i]
		}
	case modeFloatMult:
		joinFloatMult(t, m.base, prim, sec)
	case modeFloatQuant:
		k := m.k
		cut := mid[L]() >> k
		maxLow := L(1)<<k - 1
		for i, y := range prim {
			low := sec[i]
			if y < cut {
				low = maxLow - low
			}
			prim[i] = y<<k + low
		}
	case modeDict:
		dict := m.dict
		for i, ix := range dictIdx {
			if int(ix) >= len(dict) {
				return corrupt("dictionary index %d outside a dictionary of %d", ix, len(dict))
			}
			prim[i] = L(dict[ix])
		}
	}
	fromOrdered(t, prim)
	if direct == nil {
		putLatents(dst, prim)
	}
	return nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

func toLatents[L latent](xs []uint64) []L {
	out := make([]L, len(xs))
	for i, x := range xs {
		out[i] = L(x)
	}
	return out
}

// putLatents writes xs little-endian into dst.
func putLatents[L latent](dst []byte, xs []L) {
	switch s := any(xs).(type) {
	case []uint8:
		copy(dst, s)
	case []uint16:
		for i, x := range s {
			binary.LittleEndian.PutUint16(dst[2*i:], x)
		}
	case []uint32:
		for i, x := range s {
			binary.LittleEndian.PutUint32(dst[4*i:], x)
		}
	case []uint64:
		for i, x := range s {
			binary.LittleEndian.PutUint64(dst[8*i:], x)
		}
	}
}

// getLatents reads len(xs) little-endian values of src into xs.
func getLatents[L latent](xs []L, src []byte) {
	switch s := any(xs).(type) {
	case []uint8:
		copy(s, src)
	case []uint16:
		for i := range s {
			s[i] = binary.LittleEndian.Uint16(src[2*i:])
		}
	case []uint32:
		for i := range s {
			s[i] = binary.LittleEndian.Uint32(src[4*i:])
		}
	case []uint64:
		for i := range s {
			s[i] = binary.LittleEndian.Uint64(src[8*i:])
		}
	}
}

// undelta reverses v's delta encoding over the page's n latents xs, whose
// first n - stateN hold the decoded deltas; state is the page's delta state.
func undelta[L latent](m *chunkMeta, v *latentVar, xs []L, state []L, lookbacks []uint32, n int) error {
	body := max(n-v.stateN, 0)
	mid := mid[L]()
	switch v.delta {
	case deltaNone:
		return nil
	case deltaConsecutive:
		for i := range xs[:body] {
			xs[i] ^= mid
		}
		clear(xs[body:])
		for o := len(state) - 1; o >= 0; o-- {
			mom := state[o]
			for i, d := range xs {
				xs[i] = mom
				mom += d
			}
		}
	case deltaLookback:
		sn := v.stateN
		if body > 0 {
			copy(xs[sn:], xs[:body])
		}
		copy(xs[:min(sn, n)], state)
		win := uint32(1) << m.winLog
		for i := range body {
			p := sn + i
			l := lookbacks[i]
			if l > win || l == 0 {
				return corrupt("lookback %d outside the window of %d", l, win)
			}
			x := xs[p] ^ mid
			if q := p - int(l); q >= 0 {
				x += xs[q]
			}
			xs[p] = x
		}
	case deltaConv1:
		order := v.stateN
		if body > 0 {
			copy(xs[order:], xs[:body])
		}
		copy(xs[:min(order, n)], state)
		w := m.weights
		bias, q := m.bias, m.quant
		for p := order; p < n; p++ {
			s := bias
			for j, wt := range w {
				s += wt * int64(xs[p-order+j])
			}
			xs[p] = (xs[p] ^ mid) + L(max(s, 0)>>q)
		}
	}
	return nil
}
