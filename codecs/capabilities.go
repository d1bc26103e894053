package codecs

// Capabilities is what a prepared chain, or a prepared array->bytes codec
// (PreparedArrayToBytes), declares about itself, for planners: they read
// these fields, found once when the chain is prepared, instead of probing
// for concrete codecs.
type Capabilities struct {
	// Identity: an encoded chunk is byte for byte its decoded form, so a
	// reader may read it, whole or in part, straight into its destination.
	Identity bool
	// FixedSize: every chunk encodes to exactly MaxEncodedSize bytes.
	FixedSize bool
	// PartialDecode: the encoding can be read in parts (sharding_indexed;
	// for a chain, sharding_indexed alone), so a reader may fetch only the
	// byte ranges a selection needs. The package that implements the
	// codec gives readers the means to locate the parts.
	PartialDecode bool
	// InPlace: the array->bytes codec decodes with the encoded chunk as
	// both source and destination (its encoding has the decoded size), so
	// the chain's last bytes->bytes decoder writes straight into the
	// caller's output.
	InPlace bool
}

// FixedSizer is implemented by codecs whose encoded size depends on the
// decoded size alone, so that MaxEncodedSize is the exact size (crc32c;
// an array->bytes codec declares it in its prepared Capabilities).
type FixedSizer interface {
	FixedEncodedSize() bool
}

// FixedEncodedSize implements FixedSizer: crc32c adds 4 bytes.
func (*CRC32C) FixedEncodedSize() bool { return true }

// Capabilities returns what the chain declares about itself.
func (c *Chain) Capabilities() Capabilities { return c.caps }

// FixedSize reports whether every chunk encodes to exactly MaxEncodedSize
// bytes: Capabilities().FixedSize.
func (c *Chain) FixedSize() bool { return c.caps.FixedSize }

// capabilities works out the chain's capabilities from its prepared
// array->bytes codec and its bytes->bytes codecs. Array->array codecs
// always encode to their encoded representation's size, so they keep a
// fixed size (and rule out identity and partial reads).
func (c *Chain) capabilities() Capabilities {
	a := c.a2bP.Capabilities()
	fixed := a.FixedSize
	for _, b := range c.b2b {
		if f, ok := b.(FixedSizer); !ok || !f.FixedEncodedSize() {
			fixed = false
		}
	}
	alone := len(c.a2a) == 0 && len(c.b2b) == 0
	return Capabilities{
		Identity:      a.Identity && alone,
		FixedSize:     fixed,
		PartialDecode: a.PartialDecode && alone,
		InPlace:       a.InPlace && len(c.a2a) == 0,
	}
}
