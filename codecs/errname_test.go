package codecs_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
)

// TestConfigErrorNamesCodecOnce: a configuration error names the codec
// once (the review's "codec sharding_indexed: ...: sharding_indexed: ...").
func TestConfigErrorNamesCodecOnce(t *testing.T) {
	for _, name := range codecs.Registered() {
		_, err := codecs.New(codecs.Spec{Name: name, Configuration: []byte(`{"gozarr_unknown":1}`)})
		if err == nil {
			t.Errorf("%s accepted an unknown field", name)
			continue
		}
		if n := strings.Count(err.Error(), name); n != 1 {
			t.Errorf("%s: the name appears %d times in %q", name, n, err)
		}
		// A missing configuration, for the codecs that need one.
		if _, err := codecs.New(codecs.Spec{Name: name}); err != nil {
			if n := strings.Count(err.Error(), name); n != 1 {
				t.Errorf("%s without configuration: the name appears %d times in %q", name, n, err)
			}
		}
	}
}

// TestPrepareErrorNamesCodecOnce: a codec that does not fit the
// representation it is prepared for is named once in the error (Prepare
// prefixed "codec bytes: " to the codec's own "bytes: ..."), at every
// level of nested sharding.
func TestPrepareErrorNamesCodecOnce(t *testing.T) {
	i32 := codecs.ChunkRepr{Shape: []int{4, 4}, DType: dtype.TypeInt32, Fill: make([]byte, 4)}
	for _, tc := range []struct {
		name, specs string // name: the codec's name as its errors write it
	}{
		{"bytes:", `[{"name":"bytes"}]`},
		{"vlen-utf8 ", `[{"name":"vlen-utf8"}]`},
		{"sharding_indexed:", `[{"name":"sharding_indexed","configuration":{"chunk_shape":[3],
			"codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}]}}]`},
		{"bytes:", `[{"name":"sharding_indexed","configuration":{"chunk_shape":[2,2],
			"codecs":[{"name":"bytes"}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}}]}}]`},
	} {
		var specs []codecs.Spec
		if err := json.Unmarshal([]byte(tc.specs), &specs); err != nil {
			t.Fatal(err)
		}
		_, err := codecs.NewChain(specs, i32)
		if !errors.Is(err, codecs.ErrInvalidConfig) {
			t.Errorf("%s: %v, want ErrInvalidConfig", tc.specs, err)
			continue
		}
		if n := strings.Count(err.Error(), tc.name); n != 1 {
			t.Errorf("%s: %q names %s %d times", tc.specs, err, tc.name, n)
		}
	}
}
