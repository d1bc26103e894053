package storetest

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
)

// Request is one HTTP request seen by a Recorder.
type Request struct {
	Method string
	Path   string      // URL path, e.g. "/bucket/prefix/key" with path-style addressing
	Query  string      // raw query ("list-type=2&prefix=..." for a listing)
	Range  string      // the Range header, "" when absent
	Status int         // response status, 0 when the round trip failed
	Header http.Header // a copy of the request headers
}

// Recorder is an http.RoundTripper that records every request it forwards.
// It is safe for concurrent use.
type Recorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	reqs []Request
	body atomic.Int64
}

// NewRecorder returns a Recorder forwarding to next (http.DefaultTransport
// when nil).
func NewRecorder(next http.RoundTripper) *Recorder {
	if next == nil {
		next = http.DefaultTransport
	}
	return &Recorder{next: next}
}

// RoundTrip implements http.RoundTripper.
func (r *Recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	rq := Request{Method: req.Method, Path: req.URL.Path, Query: req.URL.RawQuery, Range: req.Header.Get("Range"), Header: req.Header.Clone()}
	resp, err := r.next.RoundTrip(req)
	if resp != nil {
		rq.Status = resp.StatusCode
		resp.Body = countingBody{resp.Body, &r.body}
	}
	r.mu.Lock()
	r.reqs = append(r.reqs, rq)
	r.mu.Unlock()
	return resp, err
}

// Client returns an *http.Client sending through r, for s3.WithHTTPClient
// or the HTTP store's WithClient.
func (r *Recorder) Client() *http.Client { return &http.Client{Transport: r} }

// Requests returns the recorded requests with the given method ("" for all),
// in the order they completed.
func (r *Recorder) Requests(method string) []Request {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Request
	for _, q := range r.reqs {
		if method == "" || strings.EqualFold(q.Method, method) {
			out = append(out, q)
		}
	}
	return out
}

// Count returns how many requests with the given method ("" for all) were
// recorded.
func (r *Recorder) Count(method string) int { return len(r.Requests(method)) }

// BodyBytes returns how many bytes of answer bodies the client has read
// through r, so tests can check that a read stops early.
func (r *Recorder) BodyBytes() int64 { return r.body.Load() }

// Reset forgets every recorded request and the count of body bytes.
func (r *Recorder) Reset() {
	r.mu.Lock()
	r.reqs = nil
	r.body.Store(0)
	r.mu.Unlock()
}

// countingBody counts the bytes read from an answer's body.
type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}
