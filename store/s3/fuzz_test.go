package s3_test

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/store/storetest"
)

// settableResponse answers every request with the response last set.
type settableResponse struct {
	mu     sync.Mutex
	status int
	cr     string
	body   []byte
}

func (f *settableResponse) RoundTrip(req *http.Request) (*http.Response, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	h := http.Header{}
	if f.cr != "" {
		h.Set("Content-Range", f.cr)
	}
	h.Set("Content-Type", "application/xml")
	return &http.Response{
		StatusCode: f.status, Status: strconv.Itoa(f.status), Header: h,
		Body: io.NopCloser(bytes.NewReader(f.body)), ContentLength: int64(len(f.body)), Request: req,
	}, nil
}

var fuzzStatuses = []int{200, 206, 416, 404, 500, 503, 403, 301, 204}

// FuzzResponse feeds arbitrary S3 answers (status, Content-Range, body,
// which may be an XML error) to Get and ReadInto: they must never panic,
// and what they accept must fit the range asked for.
func FuzzResponse(f *testing.F) {
	f.Add(uint8(0), "", []byte("0123456789"), uint8(1), int64(2), int64(3))
	f.Add(uint8(1), "bytes 2-4/10", []byte("234"), uint8(1), int64(2), int64(3))
	f.Add(uint8(1), "bytes 7-9/10", []byte("789"), uint8(3), int64(0), int64(3))
	f.Add(uint8(1), "bytes 0-9/3", []byte("0123456789"), uint8(3), int64(0), int64(3))
	f.Add(uint8(2), "", []byte(`<Error><Code>InvalidRange</Code></Error>`), uint8(1), int64(20), int64(5))
	f.Add(uint8(3), "", []byte(`<Error><Code>NoSuchKey</Code></Error>`), uint8(0), int64(0), int64(0))
	f.Add(uint8(6), "", []byte(`<Error><Code>AccessDenied</Code><Message>no</Message></Error>`), uint8(2), int64(1), int64(0))
	f.Add(uint8(1), "bytes 0-99999999999999999999/1", []byte("ab"), uint8(0), int64(0), int64(0))
	rt := &settableResponse{}
	srv := &s3test.Server{Endpoint: "http://fuzz.invalid", AccessKey: "a", SecretKey: "b", Bucket: "b", Region: "us-east-1"}
	st := srv.Store(f, "p", s3.WithHTTPClient(&http.Client{Transport: rt}), s3.WithRetry(1, time.Millisecond))
	f.Fuzz(func(t *testing.T, status uint8, cr string, body []byte, kind uint8, off, n int64) {
		rt.mu.Lock()
		rt.status, rt.cr, rt.body = fuzzStatuses[int(status)%len(fuzzStatuses)], cr, body
		rt.mu.Unlock()
		storetest.CheckFuzzedRead(t, st, "k", kind, off, n)
	})
}
