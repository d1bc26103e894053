package http_test

import (
	"bytes"
	"io"
	nethttp "net/http"
	"strconv"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store/http"
	"github.com/gozarr/gozarr/store/storetest"
)

// fixedResponse answers every request with the same status, Content-Range
// and body.
type fixedResponse struct {
	status int
	cr     string
	body   []byte
}

func (f fixedResponse) RoundTrip(req *nethttp.Request) (*nethttp.Response, error) {
	h := nethttp.Header{}
	if f.cr != "" {
		h.Set("Content-Range", f.cr)
	}
	return &nethttp.Response{
		StatusCode: f.status, Status: strconv.Itoa(f.status), Header: h,
		Body: io.NopCloser(bytes.NewReader(f.body)), ContentLength: int64(len(f.body)), Request: req,
	}, nil
}

var fuzzStatuses = []int{200, 206, 416, 404, 500, 503, 403, 301, 204}

// FuzzResponse feeds arbitrary server answers (status, Content-Range, body)
// to Get and ReadInto: they must never panic, and what they accept must fit
// the range asked for.
func FuzzResponse(f *testing.F) {
	f.Add(uint8(0), "", []byte("0123456789"), uint8(1), int64(2), int64(3))
	f.Add(uint8(1), "bytes 2-4/10", []byte("234"), uint8(1), int64(2), int64(3))
	f.Add(uint8(1), "bytes 7-9/10", []byte("789"), uint8(3), int64(0), int64(3))
	f.Add(uint8(1), "bytes 0--1/0", []byte(""), uint8(3), int64(0), int64(4))
	f.Add(uint8(1), "bytes 5-4/10", []byte("x"), uint8(2), int64(5), int64(0))
	f.Add(uint8(2), "bytes */10", []byte(""), uint8(1), int64(20), int64(5))
	f.Add(uint8(1), "bytes 0-99999999999999999999/1", []byte("ab"), uint8(0), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, status uint8, cr string, body []byte, kind uint8, off, n int64) {
		rt := fixedResponse{status: fuzzStatuses[int(status)%len(fuzzStatuses)], cr: cr, body: body}
		st, err := http.New("http://fuzz.invalid/x", http.WithClient(&nethttp.Client{Transport: rt}), http.WithRetry(1, time.Millisecond))
		if err != nil {
			t.Fatal(err)
		}
		storetest.CheckFuzzedRead(t, st, "k", kind, off, n)
	})
}
