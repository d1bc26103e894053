package s3_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/store/storetest"
)

// fuzzTimeouts keep a fuzzed answer from stalling a run for long.
var fuzzTimeouts = s3.WithTimeouts(store.Timeouts{Header: 10 * time.Second, Idle: 10 * time.Second})

// FuzzGetRanges reads fuzzed ranges of an object through GetRanges from
// the fake S3 server behind storetest.RangeFaults: every answer the store
// accepts must be exactly the right bytes, and the faults that a retry or
// slicing repairs (none, Range ignored, one 503, no Content-Length) must
// not fail the read.
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
		fake := s3test.NewFake(t, "b")
		val := make([]byte, size)
		for i := range val {
			val[i] = byte(i*31 + i>>8)
		}
		if _, err := fake.Backend.PutObject("b", "p/k", nil, bytes.NewReader(val), int64(len(val)), nil); err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(storetest.RangeFaults(fake.Handler, int(fault)))
		defer ts.Close()
		srv := *fake
		srv.Endpoint = ts.URL
		opt := store.CoalesceOptions{MaxGap: -1}
		if coalesce {
			opt = store.CoalesceOptions{MaxGap: 100, MaxSize: 1000}
		}
		st := srv.Store(t, "p", s3.WithRetry(2, time.Millisecond), s3.WithCoalesce(opt), fuzzTimeouts)
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

// FuzzSize feeds Size (a HeadObject) arbitrary raw answers: status line,
// headers and body as the server writes them. It must never panic or
// hang, a size it accepts is not negative, and its errors name the key.
func FuzzSize(f *testing.F) {
	f.Add(uint16(200), "Content-Length: 10\r\n", []byte{})
	f.Add(uint16(200), "", []byte{})
	f.Add(uint16(200), "Content-Length: -1\r\n", []byte{})
	f.Add(uint16(200), "Content-Length: 99999999999999999999\r\n", []byte{})
	f.Add(uint16(200), "Content-Length: 1\r\nContent-Length: 2\r\n", []byte{})
	f.Add(uint16(404), "Content-Type: application/xml\r\n", []byte{})
	f.Add(uint16(403), "Content-Length: 5\r\n", []byte("nope!"))
	f.Add(uint16(301), "x-amz-bucket-region: eu-west-1\r\n", []byte{})
	f.Add(uint16(503), "Retry-After: 1\r\n", []byte{})
	f.Fuzz(func(t *testing.T, status uint16, header string, body []byte) {
		answer := []byte(fmt.Sprintf("HTTP/1.1 %d X\r\n%s\r\n", status%1000, header))
		answer = append(answer, body...)
		ts := httptest.NewServer(storetest.RawAnswer(func(*http.Request) []byte { return answer }))
		defer ts.Close()
		srv := &s3test.Server{Endpoint: ts.URL, AccessKey: "a", SecretKey: "b", Bucket: "b", Region: "us-east-1"}
		st := srv.Store(t, "p", s3.WithRetry(1, time.Millisecond), fuzzTimeouts)
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

// listPages answers ListObjectsV2 requests from pages decoded from a fuzz
// target's bytes, choosing the page by the request's continuation token,
// so a fuzzed server can repeat tokens, send keys out of order or outside
// the prefix, and truncate forever. raw, when not empty, is sent as the
// body of every answer instead.
type listPages struct {
	pages []string // XML bodies; page 0 answers the first request
	raw   string
}

// decodePages builds up to 8 pages from data: per page a flags byte
// (truncated, next-token choice) and up to 4 keys and prefixes, each a
// length byte and that many bytes.
func decodePages(data []byte) []string {
	var pages []string
	for len(data) > 0 && len(pages) < 8 {
		flags := data[0]
		data = data[1:]
		var b strings.Builder
		b.WriteString(`<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>b</Name>`)
		for i := 0; i < int(flags>>5)%5 && len(data) > 0; i++ {
			n := min(int(data[0]%16), len(data)-1)
			name := string(data[1 : 1+n])
			data = data[1+n:]
			var x strings.Builder
			if err := xmlEscape(&x, name); err != nil {
				continue
			}
			if flags&(1<<uint(i)) != 0 {
				fmt.Fprintf(&b, "<CommonPrefixes><Prefix>p/%s</Prefix></CommonPrefixes>", x.String())
			} else {
				fmt.Fprintf(&b, "<Contents><Key>p/%s</Key><Size>1</Size></Contents>", x.String())
			}
		}
		if flags&0x10 != 0 {
			fmt.Fprintf(&b, "<IsTruncated>true</IsTruncated><NextContinuationToken>t%d</NextContinuationToken>", flags%8)
		} else {
			b.WriteString("<IsTruncated>false</IsTruncated>")
		}
		b.WriteString("</ListBucketResult>")
		pages = append(pages, b.String())
	}
	return pages
}

// xmlEscape writes s escaped for XML text, failing on bytes XML cannot hold.
func xmlEscape(w *strings.Builder, s string) error {
	for _, c := range []byte(s) {
		switch {
		case c == '<':
			w.WriteString("&lt;")
		case c == '>':
			w.WriteString("&gt;")
		case c == '&':
			w.WriteString("&amp;")
		case c < 0x20 || c >= 0x80:
			return errors.New("not XML text")
		default:
			w.WriteByte(c)
		}
	}
	return nil
}

func (l *listPages) RoundTrip(req *http.Request) (*http.Response, error) {
	body := l.raw
	if body == "" {
		i := 0
		if tok := req.URL.Query().Get("continuation-token"); tok != "" {
			i, _ = strconv.Atoi(strings.TrimPrefix(tok, "t"))
		}
		if len(l.pages) > 0 {
			body = l.pages[i%len(l.pages)]
		}
	}
	h := http.Header{}
	h.Set("Content-Type", "application/xml")
	return &http.Response{
		StatusCode: 200, Status: "200 OK", Header: h,
		Body: io.NopCloser(strings.NewReader(body)), ContentLength: int64(len(body)), Request: req,
	}, nil
}

// FuzzList lists a fuzzed bucket (pages of keys and prefixes, any
// continuation tokens, or a raw body): List and ListDir must end, yield
// valid keys in strictly increasing order, and never panic.
func FuzzList(f *testing.F) {
	f.Add([]byte{0x20, 1, 'a'}, "", "")
	f.Add([]byte{0x51, 1, 'a', 1, 'b', 0x40, 1, 'c', 1, 'd'}, "", "")
	f.Add([]byte{0x31, 1, 'b', 0x30, 1, 'a'}, "", "")        // keys out of order, tokens repeating
	f.Add([]byte{0x10}, "", "")                              // empty pages, truncated for ever
	f.Add([]byte{0x62, 2, 'a', '/', 2, 'b', '/', 0}, "", "") // keys holding "/" and an empty key
	f.Add([]byte{0x20, 3, '.', '.', '/'}, "", "c/")          // a key that is not a valid key
	f.Add([]byte{}, `<ListBucketResult><Contents><Key>p/x</Key></Contents><IsTruncated>true</IsTruncated><NextContinuationToken>same</NextContinuationToken></ListBucketResult>`, "")
	f.Add([]byte{}, `<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>`, "")
	f.Add([]byte{}, `not xml at all`, "")
	f.Fuzz(func(t *testing.T, data []byte, raw, prefix string) {
		if store.ValidatePrefix(prefix) != nil {
			return
		}
		rt := &listPages{pages: decodePages(data), raw: raw}
		srv := &s3test.Server{Endpoint: "http://fuzz.invalid", AccessKey: "a", SecretKey: "b", Bucket: "b", Region: "us-east-1"}
		st := srv.Store(t, "p", s3.WithHTTPClient(&http.Client{Transport: rt}), s3.WithRetry(1, time.Millisecond))
		ctx := context.Background()
		last, n := "", 0
		for k, err := range st.List(ctx, prefix) {
			if err != nil {
				break
			}
			if n++; n > 1<<16 {
				t.Fatal("List does not end")
			}
			if store.ValidateKey(k) != nil || k <= last {
				t.Fatalf("List yielded %q after %q", k, last)
			}
			last = k
		}
		dir := prefix
		if dir != "" && !strings.HasSuffix(dir, "/") {
			dir += "/"
		}
		keys, dirs, err := st.ListDir(ctx, dir)
		if err != nil {
			return
		}
		for i, k := range keys {
			if store.ValidateKey(k) != nil || strings.Contains(k, "/") || (i > 0 && k <= keys[i-1]) {
				t.Fatalf("ListDir keys %q", keys)
			}
		}
		for i, d := range dirs {
			if !strings.HasSuffix(d, "/") || strings.Contains(strings.TrimSuffix(d, "/"), "/") || (i > 0 && d <= dirs[i-1]) {
				t.Fatalf("ListDir dirs %q", dirs)
			}
		}
	})
}
