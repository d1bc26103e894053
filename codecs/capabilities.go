package codecs

// Capabilities is what a resolved (prepared) chain declares about itself,
// for planners: they read these instead of probing for concrete codecs.
type Capabilities struct {
	// Identity: an encoded chunk is byte for byte its decoded form, so a
	// reader may read it, whole or in part, straight into its destination.
	Identity bool
	// FixedSize: every chunk encodes to exactly MaxEncodedSize bytes.
	FixedSize bool
	// PartialDecode: the chain is one array->bytes codec whose encoding
	// can be read in parts (a PartialDecoder: sharding_indexed alone),
	// so a reader may fetch only the byte ranges a selection needs.
	PartialDecode bool
}

// FixedSizer is implemented by codecs whose encoded size depends on the
// decoded size alone, so that MaxEncodedSize is the exact size (bytes,
// crc32c).
type FixedSizer interface {
	FixedEncodedSize() bool
}

// PartialDecoder is implemented by array->bytes codecs whose encoding can
// be read in parts (sharding_indexed). The package that implements one
// gives readers the means to locate the parts.
type PartialDecoder interface {
	ArrayToBytes
	PartialDecode() bool
}

// FixedEncodedSize implements FixedSizer: bytes encodes to the decoded size.
func (*Bytes) FixedEncodedSize() bool { return true }

// FixedEncodedSize implements FixedSizer: crc32c adds 4 bytes.
func (*CRC32C) FixedEncodedSize() bool { return true }

// Capabilities returns what the chain declares about itself.
func (c *Chain) Capabilities() Capabilities {
	pd, partial := c.a2b.(PartialDecoder)
	return Capabilities{
		Identity:      c.Identity(),
		FixedSize:     c.FixedSize(),
		PartialDecode: partial && pd.PartialDecode() && len(c.a2a) == 0 && len(c.b2b) == 0,
	}
}

// FixedSize reports whether every chunk encodes to exactly MaxEncodedSize
// bytes: every codec of the chain is a FixedSizer that says so (transpose
// keeps the size too).
func (c *Chain) FixedSize() bool {
	for _, a := range c.a2a {
		if _, ok := a.(*Transpose); !ok {
			if f, ok := a.(FixedSizer); !ok || !f.FixedEncodedSize() {
				return false
			}
		}
	}
	if f, ok := c.a2b.(FixedSizer); !ok || !f.FixedEncodedSize() {
		return false
	}
	for _, b := range c.b2b {
		if f, ok := b.(FixedSizer); !ok || !f.FixedEncodedSize() {
			return false
		}
	}
	return true
}
