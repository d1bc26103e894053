// Package s3test holds helpers for testing code that reads and writes
// through store/s3: an in-process fake S3 server (gofakes3), the connection
// settings of a real S3 server taken from the environment, and Recorder, an
// http.RoundTripper that records every request so tests can assert how many
// GETs a read costs and which byte ranges they asked for.
//
// Typical use:
//
//	srv := s3test.NewFake(t, "bucket")
//	rec := s3test.NewRecorder(nil)
//	st := srv.Store(t, "prefix", s3.WithHTTPClient(rec.Client()))
//	... read through st ...
//	gets := rec.Requests("GET") // method, key, Range header, status
package s3test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"github.com/gozarr/gozarr/store/objstore"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/storetest"
)

// Environment variables naming a real S3 server for tests (see .ci/s3server.sh).
const (
	EnvEndpoint  = "GOZARR_S3_ENDPOINT"   // e.g. http://127.0.0.1:7070
	EnvAccessKey = "GOZARR_S3_ACCESS_KEY" // static access key id
	EnvSecretKey = "GOZARR_S3_SECRET_KEY" // static secret key
	EnvBucket    = "GOZARR_S3_BUCKET"     // an existing bucket the tests may write to
	EnvRegion    = "GOZARR_S3_REGION"     // optional, default us-east-1
)

// Server is an S3 endpoint for tests: the in-process fake, or a real server.
type Server struct {
	Endpoint  string // base URL, path-style
	AccessKey string
	SecretKey string
	Bucket    string
	Region    string
	// Handler is the fake's http.Handler (nil for a real server), so tests
	// can put fault-injecting handlers in front of it.
	Handler http.Handler
	// Backend is the fake's storage (nil for a real server), for filling it
	// without HTTP round trips.
	Backend gofakes3.Backend
}

// NewFake starts gofakes3 (in memory) on a loopback httptest server, creates
// bucket in it, and stops the server when t ends.
func NewFake(t testing.TB, bucket string) *Server {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(bucket); err != nil {
		t.Fatalf("s3test: creating bucket %q: %v", bucket, err)
	}
	h := gofakes3.New(backend).Server()
	ts := httptest.NewServer(h)
	t.Cleanup(ts.Close)
	return &Server{
		Endpoint: ts.URL, AccessKey: "test", SecretKey: "testsecret",
		Bucket: bucket, Region: "us-east-1", Handler: h, Backend: backend,
	}
}

// LookupEnv returns the real S3 server named by the GOZARR_S3_* variables,
// and false when they are unset.
func LookupEnv() (*Server, bool) {
	s := &Server{
		Endpoint:  os.Getenv(EnvEndpoint),
		AccessKey: os.Getenv(EnvAccessKey),
		SecretKey: os.Getenv(EnvSecretKey),
		Bucket:    os.Getenv(EnvBucket),
		Region:    os.Getenv(EnvRegion),
	}
	if s.Endpoint == "" || s.Bucket == "" {
		return nil, false
	}
	if s.Region == "" {
		s.Region = "us-east-1"
	}
	return s, true
}

// FromEnv returns the real S3 server named by the GOZARR_S3_* variables, or
// skips t with a message saying how to provide one when they are unset.
func FromEnv(t testing.TB) *Server {
	t.Helper()
	s, ok := LookupEnv()
	if !ok {
		t.Skipf("s3test: no real S3 server: set %s, %s, %s and %s (eval \"$(bash .ci/s3server.sh start)\" starts one)",
			EnvEndpoint, EnvAccessKey, EnvSecretKey, EnvBucket)
	}
	return s
}

// Options returns the s3.Open options that reach the server (endpoint,
// region, static credentials, fast retries), followed by extra.
func (s *Server) Options(extra ...s3.Option) []s3.Option {
	o := []s3.Option{
		s3.WithEndpoint(s.Endpoint),
		s3.WithRegion(s.Region),
		s3.WithStaticCredentials(s.AccessKey, s.SecretKey, ""),
		s3.WithRetry(objstore.DefaultMaxAttempts, 20*time.Millisecond),
	}
	return append(o, extra...)
}

// Store opens a store on the server's bucket under prefix, failing t on error.
func (s *Server) Store(t testing.TB, prefix string, extra ...s3.Option) *s3.Store {
	t.Helper()
	st, err := s3.Open(context.Background(), s.Bucket, prefix, s.Options(extra...)...)
	if err != nil {
		t.Fatalf("s3test: opening s3://%s/%s at %s: %v", s.Bucket, prefix, s.Endpoint, err)
	}
	return st
}

// Request is one HTTP request seen by a Recorder (storetest.Request).
type Request = storetest.Request

// Recorder is an http.RoundTripper that records every request it
// forwards (storetest.Recorder).
type Recorder = storetest.Recorder

// NewRecorder returns a Recorder forwarding to next
// (storetest.NewRecorder).
func NewRecorder(next http.RoundTripper) *Recorder { return storetest.NewRecorder(next) }

// Latency returns an http.RoundTripper that waits d before forwarding each
// request to next (http.DefaultTransport when nil), as a distant server
// would: a simple model of per-request latency for benchmarks. The wait
// ends early, with the context's error, when the request's context is done.
func Latency(next http.RoundTripper, d time.Duration) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return latency{next: next, d: d}
}

type latency struct {
	next http.RoundTripper
	d    time.Duration
}

func (l latency) RoundTrip(req *http.Request) (*http.Response, error) {
	t := time.NewTimer(l.d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-req.Context().Done():
		return nil, req.Context().Err()
	}
	return l.next.RoundTrip(req)
}
