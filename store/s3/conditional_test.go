package s3_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/store/storetest"
)

// TestConditionalReads: GetIf on S3. gofakes3 ignores If-Match and
// If-Unmodified-Since on GET and HEAD (it evaluates only If-None-Match
// and If-Modified-Since), so over it the layer's check of the answer's
// ETag and Last-Modified is what refuses other versions; in front of it
// a handler that evaluates the conditions as S3 does (412
// PreconditionFailed) shows the conditions go on the wire and a 412 is
// store.ErrChanged. A real server (versitygw in CI) runs the same checks.
func TestConditionalReads(t *testing.T) {
	t.Run("gofakes3", func(t *testing.T) {
		st := s3test.NewFake(t, "b").Store(t, "p")
		storetest.TestConditionalReader(t, st, st, st.ReadCondition)
	})
	t.Run("evaluating", func(t *testing.T) {
		srv := s3test.NewFake(t, "b")
		var sent, failed atomic.Int64
		h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Method != http.MethodGet && r.Method != http.MethodHead {
				srv.Handler.ServeHTTP(w, r)
				return
			}
			im, ius := r.Header.Get("If-Match"), r.Header.Get("If-Unmodified-Since")
			if im != "" || ius != "" {
				sent.Add(1)
				if preconditionFails(srv.Handler, r, im, ius) {
					failed.Add(1)
					w.Header().Set("Content-Type", "application/xml")
					w.WriteHeader(http.StatusPreconditionFailed)
					if r.Method == http.MethodGet {
						fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message></Error>`)
					}
					return
				}
			}
			srv.Handler.ServeHTTP(w, r)
		})
		ts := httptest.NewServer(h)
		defer ts.Close()
		ev := *srv
		ev.Endpoint = ts.URL
		st := ev.Store(t, "p")
		storetest.TestConditionalReader(t, st, st, st.ReadCondition)
		if sent.Load() == 0 || failed.Load() == 0 {
			t.Errorf("%d conditional requests, %d answered 412: want both > 0", sent.Load(), failed.Load())
		}
	})
	t.Run("real", func(t *testing.T) {
		srv := s3test.FromEnv(t)
		st := srv.Store(t, storetest.UniquePrefix("condread"))
		storetest.Cleanup(t, st)
		storetest.TestConditionalReader(t, st, st, st.ReadCondition)
	})
}

// preconditionFails evaluates If-Match and If-Unmodified-Since against
// the object's ETag and Last-Modified (a HEAD of r's URL to next), as
// S3 does: a missing object fails neither (it is a 404).
func preconditionFails(next http.Handler, r *http.Request, ifMatch, ifUnmodifiedSince string) bool {
	head := httptest.NewRequest(http.MethodHead, r.URL.String(), nil)
	head.Header = r.Header.Clone()
	head.Header.Del("If-Match")
	head.Header.Del("If-Unmodified-Since")
	head.Header.Del("Range")
	rec := httptest.NewRecorder()
	next.ServeHTTP(rec, head)
	if rec.Code != http.StatusOK {
		return false
	}
	if ifMatch != "" && strings.Trim(ifMatch, `"`) != strings.Trim(rec.Header().Get("ETag"), `"`) {
		return true
	}
	if ifUnmodifiedSince != "" {
		since, err1 := http.ParseTime(ifUnmodifiedSince)
		lm, err2 := http.ParseTime(rec.Header().Get("Last-Modified"))
		return err1 == nil && err2 == nil && lm.After(since)
	}
	return false
}
