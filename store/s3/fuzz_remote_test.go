package s3_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
)

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
