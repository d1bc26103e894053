package http_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	nethttp "net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/http"
	"github.com/gozarr/gozarr/store/storetest"
)

// fuzzValue is the value of n bytes the fuzz targets' servers hold.
func fuzzValue(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i*31 + i>>8)
	}
	return b
}

// FuzzGetRanges reads fuzzed ranges of a value through GetRanges from a
// server that spoils reads in one of storetest.RangeFaults' ways: every
// answer the store accepts must be exactly the right bytes, and the faults
// that a retry or slicing repairs (none, Range ignored, one 503, no
// Content-Length) must not fail the read at all.
func FuzzGetRanges(f *testing.F) {
	f.Add(uint16(1000), uint8(storetest.FaultNone), false, []byte{1, 10, 0, 20, 0, 1, 200, 0, 5, 0})
	f.Add(uint16(1000), uint8(storetest.FaultIgnore), true, []byte{1, 10, 0, 20, 0, 3, 0, 0, 7, 0, 2, 0xe0, 3, 0, 0})
	f.Add(uint16(5000), uint8(storetest.FaultOverlong), false, []byte{1, 0, 0, 10, 0, 1, 0x80, 0x13, 0xff, 0})
	f.Add(uint16(300), uint8(storetest.FaultTruncate), true, []byte{1, 5, 0, 100, 0, 0, 0, 0, 0, 0})
	f.Add(uint16(300), uint8(storetest.FaultRetry), false, []byte{3, 0, 0, 50, 0, 2, 250, 0, 0, 0, 1, 0, 2, 0, 0})
	f.Add(uint16(300), uint8(storetest.FaultShift), false, []byte{1, 5, 0, 10, 0, 3, 0, 0, 9, 0})
	f.Add(uint16(70), uint8(storetest.FaultChunked), true, []byte{1, 60, 0, 40, 0, 2, 10, 0, 0, 0, 3, 0, 0, 200, 0})
	f.Add(uint16(0), uint8(storetest.FaultNone), false, []byte{3, 0, 0, 5, 0, 1, 0, 0, 1, 0})
	f.Fuzz(func(t *testing.T, size uint16, fault uint8, coalesce bool, rdata []byte) {
		val := fuzzValue(int(size))
		h := nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
			if r.URL.Path != "/k" {
				nethttp.NotFound(w, r)
				return
			}
			nethttp.ServeContent(w, r, "", time.Time{}, bytes.NewReader(val))
		})
		ts := httptest.NewServer(storetest.RangeFaults(h, int(fault)))
		defer ts.Close()
		opt := store.CoalesceOptions{MaxGap: -1}
		if coalesce {
			opt = store.CoalesceOptions{MaxGap: 100, MaxSize: 1000}
		}
		st, err := http.New(ts.URL, http.WithRetry(2, time.Millisecond), http.WithCoalesce(opt),
			http.WithTimeouts(store.Timeouts{Header: 10 * time.Second, Idle: 10 * time.Second}))
		if err != nil {
			t.Fatal(err)
		}
		ranges := storetest.FuzzRanges(rdata)
		got, err := st.GetRanges(context.Background(), "k", ranges)
		if err != nil {
			var ke *store.KeyError
			if !errors.As(err, &ke) || ke.Key != "k" {
				t.Fatalf("GetRanges error %v does not name the key", err)
			}
			switch int(fault) % storetest.NumFaults {
			case storetest.FaultNone, storetest.FaultIgnore, storetest.FaultRetry, storetest.FaultChunked:
				t.Fatalf("GetRanges(%v) with fault %d: %v", ranges, fault, err)
			}
			return
		}
		storetest.CheckRanges(t, val, ranges, got)
	})
}

// FuzzSize feeds Size (a HEAD, and a GET when the HEAD has no length)
// arbitrary raw answers: status line, headers and body as the server
// writes them. It must never panic or hang, a size it accepts is not
// negative, and its errors name the key.
func FuzzSize(f *testing.F) {
	f.Add(uint16(200), "Content-Length: 10\r\n", []byte("0123456789"))
	f.Add(uint16(200), "", []byte("no length"))
	f.Add(uint16(200), "Transfer-Encoding: chunked\r\n", []byte("5\r\nhello\r\n0\r\n\r\n"))
	f.Add(uint16(200), "Content-Length: -1\r\n", []byte{})
	f.Add(uint16(200), "Content-Length: 99999999999999999999\r\n", []byte{})
	f.Add(uint16(200), "Content-Length: 1\r\nContent-Length: 2\r\n", []byte("ab"))
	f.Add(uint16(206), "Content-Length: 3\r\nContent-Range: bytes 0-2/10\r\n", []byte("012"))
	f.Add(uint16(416), "Content-Range: bytes */10\r\n", []byte{})
	f.Add(uint16(404), "", []byte{})
	f.Add(uint16(302), "Location: /k\r\n", []byte{})
	f.Add(uint16(100), "", []byte("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok"))
	f.Add(uint16(503), "Retry-After: 99999999999999999999\r\n", []byte{})
	f.Fuzz(func(t *testing.T, status uint16, header string, body []byte) {
		answer := []byte(fmt.Sprintf("HTTP/1.1 %d X\r\n%s\r\n", status%1000, header))
		answer = append(answer, body...)
		ts := httptest.NewServer(storetest.RawAnswer(func(*nethttp.Request) []byte { return answer }))
		defer ts.Close()
		st, err := http.New(ts.URL, http.WithRetry(1, time.Millisecond),
			http.WithTimeouts(store.Timeouts{Header: 10 * time.Second, Idle: 10 * time.Second}))
		if err != nil {
			t.Fatal(err)
		}
		n, err := st.Size(context.Background(), "k")
		var ke *store.KeyError
		switch {
		case err == nil && n < 0:
			t.Fatalf("Size = %d", n)
		case err != nil && (!errors.As(err, &ke) || ke.Key != "k"):
			t.Fatalf("Size error %v does not name the key", err)
		}
	})
}
