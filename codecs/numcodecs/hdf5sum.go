package numcodecs

// The numcodecs fletcher32 and jenkins_lookup3 checksum codecs (bytes ->
// bytes), HDF5's checksums.
//
// Format: https://numcodecs.readthedocs.io/en/stable/checksum32.html (the
// data, then its checksum as 4 little-endian bytes)
// JSON names: "numcodecs.fletcher32", "numcodecs.jenkins_lookup3"
// Configuration examples (Zarr v2: {"id": "fletcher32"}, {"id":
// "jenkins_lookup3", "initval": 0, "prefix": null}):
//
//	{"name": "numcodecs.fletcher32", "configuration": {}}
//	{"name": "numcodecs.jenkins_lookup3", "configuration": {"initval": 0, "prefix": null}}

import (
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/bits"

	"github.com/gozarr/gozarr/codecs"
)

// HDF5Checksum is the "numcodecs.fletcher32" or "numcodecs.jenkins_lookup3"
// codec: encoding appends the checksum of the data as 4 little-endian
// bytes, decoding checks and strips it. fletcher32 is HDF5's
// H5_checksum_fletcher32 (16-bit big-endian words, sums reduced every 360
// words; a last odd byte counts as a word's high byte); jenkins_lookup3 is
// Bob Jenkins' lookup3 hashlittle as HDF5 uses it, seeded with "initval"
// and run over "prefix" (bytes, when given) followed by the data. An
// HDF5Checksum is immutable and safe for concurrent use.
type HDF5Checksum struct {
	id      string
	initval uint32
	prefix  []byte // jenkins_lookup3 only; nil when null
}

// NewFletcher32 returns the fletcher32 codec.
func NewFletcher32() *HDF5Checksum { return &HDF5Checksum{id: "fletcher32"} }

// NewJenkinsLookup3 returns the jenkins_lookup3 codec with the seed
// initval and the bytes prefix hashed before the data (nil for none).
func NewJenkinsLookup3(initval uint32, prefix []byte) *HDF5Checksum {
	return &HDF5Checksum{id: "jenkins_lookup3", initval: initval, prefix: prefix}
}

func init() {
	codecs.Register(prefix+"fletcher32", func(configuration json.RawMessage) (codecs.Codec, error) {
		var cfg struct{}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		return NewFletcher32(), nil
	})
	codecs.Register(prefix+"jenkins_lookup3", func(configuration json.RawMessage) (codecs.Codec, error) {
		var cfg struct {
			Initval *int64 `json:"initval"`
			Prefix  *[]int `json:"prefix"`
		}
		if err := codecs.DecodeConfig(configuration, &cfg); err != nil {
			return nil, err
		}
		var init uint32
		if cfg.Initval != nil {
			if *cfg.Initval < 0 || *cfg.Initval > 1<<32-1 {
				return nil, fmt.Errorf("%w: numcodecs.jenkins_lookup3: initval %d is not a uint32", codecs.ErrInvalidConfig, *cfg.Initval)
			}
			init = uint32(*cfg.Initval)
		}
		var pre []byte
		if cfg.Prefix != nil {
			pre = make([]byte, len(*cfg.Prefix))
			for i, b := range *cfg.Prefix {
				if b < 0 || b > 255 {
					return nil, fmt.Errorf("%w: numcodecs.jenkins_lookup3: prefix[%d] = %d is not a byte", codecs.ErrInvalidConfig, i, b)
				}
				pre[i] = byte(b)
			}
		}
		return NewJenkinsLookup3(init, pre), nil
	})
}

// Name returns "numcodecs.fletcher32" or "numcodecs.jenkins_lookup3".
func (c *HDF5Checksum) Name() string { return prefix + c.id }

// Configuration returns {} for fletcher32, {"initval", "prefix"} for
// jenkins_lookup3 (prefix as a list of byte values, or null).
func (c *HDF5Checksum) Configuration() any {
	if c.id == "fletcher32" {
		return struct{}{}
	}
	var pre []int
	for _, b := range c.prefix {
		pre = append(pre, int(b))
	}
	return struct {
		Initval uint32 `json:"initval"`
		Prefix  []int  `json:"prefix"`
	}{c.initval, pre}
}

// MaxEncodedSize returns n+4.
func (c *HDF5Checksum) MaxEncodedSize(n int) int { return n + 4 }

func (c *HDF5Checksum) sum(data []byte) uint32 {
	if c.id == "fletcher32" {
		return Fletcher32(data)
	}
	if c.prefix != nil {
		data = append(append(make([]byte, 0, len(c.prefix)+len(data)), c.prefix...), data...)
	}
	return JenkinsLookup3(data, c.initval)
}

// Encode appends src and its checksum to dst.
func (c *HDF5Checksum) Encode(dst, src []byte) ([]byte, error) {
	sum := c.sum(src)
	dst = append(dst, src...)
	return binary.LittleEndian.AppendUint32(dst, sum), nil
}

// Decode checks the checksum at the end of src and appends the data to
// dst. Input shorter than 4 bytes, or data longer than limit, is
// ErrCorrupt; a mismatch is ErrChecksum.
func (c *HDF5Checksum) Decode(dst, src []byte, limit int) ([]byte, error) {
	if len(src) < 4 {
		return dst, fmt.Errorf("%w: numcodecs.%s: %d bytes, too short for a checksum", codecs.ErrCorrupt, c.id, len(src))
	}
	data := src[:len(src)-4]
	if len(data) > limit {
		return dst, fmt.Errorf("%w: numcodecs.%s: %d bytes of data, at most %d expected", codecs.ErrCorrupt, c.id, len(data), max(limit, 0))
	}
	want := binary.LittleEndian.Uint32(src[len(src)-4:])
	if got := c.sum(data); got != want {
		return dst, fmt.Errorf("%w: numcodecs.%s: computed %08x, stored %08x", codecs.ErrChecksum, c.id, got, want)
	}
	return append(dst, data...), nil
}

// Fletcher32 returns HDF5's Fletcher-32 checksum of data.
func Fletcher32(data []byte) uint32 {
	var sum1, sum2 uint32
	fold := func() {
		sum1 = sum1&0xffff + sum1>>16
		sum2 = sum2&0xffff + sum2>>16
	}
	words := len(data) / 2
	for words > 0 {
		n := min(words, 360)
		words -= n
		for range n {
			sum1 += uint32(data[0])<<8 | uint32(data[1])
			sum2 += sum1
			data = data[2:]
		}
		fold()
	}
	if len(data) == 1 {
		sum1 += uint32(data[0]) << 8
		sum2 += sum1
		fold()
	}
	fold()
	return sum2<<16 | sum1
}

// JenkinsLookup3 returns Bob Jenkins' lookup3 hash (hashlittle) of data
// with the seed initval, as HDF5's H5_checksum_lookup3 computes it.
func JenkinsLookup3(data []byte, initval uint32) uint32 {
	a := 0xdeadbeef + uint32(len(data)) + initval
	b, c := a, a
	rot := bits.RotateLeft32
	for len(data) > 12 {
		a += binary.LittleEndian.Uint32(data)
		b += binary.LittleEndian.Uint32(data[4:])
		c += binary.LittleEndian.Uint32(data[8:])
		a -= c
		a ^= rot(c, 4)
		c += b
		b -= a
		b ^= rot(a, 6)
		a += c
		c -= b
		c ^= rot(b, 8)
		b += a
		a -= c
		a ^= rot(c, 16)
		c += b
		b -= a
		b ^= rot(a, 19)
		a += c
		c -= b
		c ^= rot(b, 4)
		b += a
		data = data[12:]
	}
	if len(data) == 0 {
		return c
	}
	var tail [12]byte
	copy(tail[:], data)
	a += binary.LittleEndian.Uint32(tail[:])
	b += binary.LittleEndian.Uint32(tail[4:])
	c += binary.LittleEndian.Uint32(tail[8:])
	c ^= b
	c -= rot(b, 14)
	a ^= c
	a -= rot(c, 11)
	b ^= a
	b -= rot(a, 25)
	c ^= b
	c -= rot(b, 16)
	a ^= c
	a -= rot(c, 4)
	b ^= a
	b -= rot(a, 14)
	c ^= b
	c -= rot(b, 24)
	return c
}
