package http_test

import (
	"bytes"
	"context"
	"fmt"
	nethttp "net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/http"
	"github.com/gozarr/gozarr/store/storetest"
)

// versioned is a server's data: values with an ETag (a write counter) and
// the time of their write, served by http.ServeContent, which evaluates
// If-Match and If-Unmodified-Since (412) unless ignore is set.
type versioned struct {
	mu     sync.Mutex
	vals   map[string][]byte
	etags  map[string]string
	times  map[string]time.Time
	writes int
	ignore bool
	conds  atomic.Int64 // requests that carried a condition
	failed atomic.Int64 // answers 412
}

// status412 counts 412 answers.
type status412 struct {
	nethttp.ResponseWriter
	n *atomic.Int64
}

func (w status412) WriteHeader(code int) {
	if code == nethttp.StatusPreconditionFailed {
		w.n.Add(1)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (v *versioned) Set(_ context.Context, key string, value []byte) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.writes++
	v.vals[key], v.etags[key], v.times[key] = bytes.Clone(value), fmt.Sprintf(`"w%d"`, v.writes), time.Now()
	return nil
}

func (v *versioned) Delete(_ context.Context, key string) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	delete(v.vals, key)
	return nil
}

func (v *versioned) ServeHTTP(w nethttp.ResponseWriter, r *nethttp.Request) {
	if r.Header.Get("If-Match") != "" || r.Header.Get("If-Unmodified-Since") != "" {
		v.conds.Add(1)
	}
	if v.ignore {
		r.Header.Del("If-Match")
		r.Header.Del("If-Unmodified-Since")
	}
	key := strings.TrimPrefix(r.URL.Path, "/")
	v.mu.Lock()
	val, ok := v.vals[key]
	etag, mod := v.etags[key], v.times[key]
	v.mu.Unlock()
	if !ok {
		nethttp.NotFound(w, r)
		return
	}
	w.Header().Set("ETag", etag)
	nethttp.ServeContent(status412{w, &v.failed}, r, key, mod, bytes.NewReader(val))
}

// TestConditionalReads: GetIf sends If-Match and If-Unmodified-Since; a
// server that evaluates them answers 412 for another version
// (store.ErrChanged), and over one that ignores them the answer's ETag
// and Last-Modified still keep another version's bytes out.
func TestConditionalReads(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		t.Run(fmt.Sprintf("ignore=%v", ignore), func(t *testing.T) {
			v := &versioned{vals: map[string][]byte{}, etags: map[string]string{}, times: map[string]time.Time{}, ignore: ignore}
			ts := newServer(t, v)
			st, err := http.New(ts.URL)
			if err != nil {
				t.Fatal(err)
			}
			storetest.TestConditionalReader(t, v, st, st.ReadCondition)
			if v.conds.Load() == 0 || (v.failed.Load() == 0) != ignore {
				t.Errorf("%d requests carried a condition, %d answered 412", v.conds.Load(), v.failed.Load())
			}
		})
	}
	var _ store.ConditionalReader = (*http.Store)(nil)
}
