package s3_test

import (
	"bytes"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/store/storetest"
)

// remote is store/s3 for storetest's shared fault tests and fuzz targets:
// gofakes3 holding the values in bucket b under prefix p.
var remote = storetest.Remote{
	Serve: func(t testing.TB, contents map[string][]byte) http.Handler {
		fake := s3test.NewFake(t, "b")
		for k, v := range contents {
			if _, err := fake.Backend.PutObject("b", "p/"+k, nil, bytes.NewReader(v), int64(len(v)), nil); err != nil {
				t.Fatal(err)
			}
		}
		return fake.Handler
	},
	Open: func(t testing.TB, endpoint string, cfg storetest.RemoteConfig) storetest.RemoteStore {
		srv := &s3test.Server{Endpoint: endpoint, AccessKey: "test", SecretKey: "testsecret", Bucket: "b", Region: "us-east-1"}
		opts := []s3.Option{s3.WithRetry(cfg.Attempts, time.Millisecond), s3.WithTimeouts(cfg.Timeouts), s3.WithCoalesce(cfg.Coalesce)}
		if cfg.Client != nil {
			opts = append(opts, s3.WithHTTPClient(cfg.Client))
		}
		return srv.Store(t, "p", opts...)
	},
	Path: storetest.PathAfter("/b/p"),
	Error: func(w http.ResponseWriter, code int) {
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(code)
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`,
			map[int]string{500: "InternalError", 503: "SlowDown", 429: "TooManyRequests"}[code], http.StatusText(code))
	},
}

// TestRemote runs storetest's fault tests on S3: first attempts spoilt,
// persistent 503s, ignored ranges, overlong, stalled and short bodies,
// 429s, a server that never answers.
func TestRemote(t *testing.T) { storetest.TestRemote(t, remote) }

// FuzzGetRanges: storetest.FuzzRemoteRanges on S3.
func FuzzGetRanges(f *testing.F) { storetest.FuzzRemoteRanges(f, remote) }

// FuzzSize: storetest.FuzzRemoteSize on S3 (HeadObject).
func FuzzSize(f *testing.F) { storetest.FuzzRemoteSize(f, remote) }

// FuzzResponse: storetest.FuzzRemoteResponse on S3 (GetObject answers,
// XML errors among them).
func FuzzResponse(f *testing.F) { storetest.FuzzRemoteResponse(f, remote) }
