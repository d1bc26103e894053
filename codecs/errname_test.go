package codecs_test

import (
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
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
