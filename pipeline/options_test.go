package pipeline

import (
	"runtime"
	"testing"

	"github.com/gozarr/gozarr/store/mem"
)

// limited is a store that states a request limit.
type limited struct{ *mem.Store }

func (limited) MaxConcurrency() int { return 48 }

func TestOptionDefaults(t *testing.T) {
	procs := runtime.GOMAXPROCS(0)
	d := Options{}.forStore(mem.New())
	if d.DecodeConcurrency != procs || d.IOConcurrency != max(8, 4*procs) || d.MaxBytesInFlight != DefaultMaxBytesInFlight {
		t.Errorf("defaults %+v", d)
	}
	if got := (Options{}).forStore(limited{mem.New()}).IOConcurrency; got != 48 {
		t.Errorf("I/O concurrency %d for a store limited to 48", got)
	}
	if got := (Options{IOConcurrency: 5}).forStore(limited{mem.New()}).IOConcurrency; got != 5 {
		t.Errorf("explicit I/O concurrency overridden: %d", got)
	}
}
