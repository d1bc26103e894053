package storetest

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
)

// Fault kinds for RangeFaults: what a faulty server does to a read.
const (
	FaultNone     = iota // pass the request on untouched
	FaultIgnore          // drop the Range header: a 200 answer with the whole value
	FaultOverlong        // answer a longer range than asked for, Content-Range saying so
	FaultTruncate        // announce the whole answer, send half of it, close the connection
	FaultRetry           // answer 503 to the first attempt of each request
	FaultShift           // claim a Content-Range one byte later than the bytes sent
	FaultChunked         // send the answer without a Content-Length
	NumFaults
)

// RangeFaults returns a handler in front of next, a handler that serves
// values with correct Range support (http.ServeContent, a fake S3), that
// spoils GETs the way fault says (one of the Fault constants, modulo
// NumFaults). A reader must either fail or return exactly the right
// bytes: none of the faults can be told apart only from the bytes.
func RangeFaults(next http.Handler, fault int) http.Handler {
	var mu sync.Mutex
	seen := map[string]bool{}
	fault %= NumFaults
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rng := r.Header.Get("Range")
		if r.Method != http.MethodGet || fault == FaultNone {
			next.ServeHTTP(w, r)
			return
		}
		switch fault {
		case FaultIgnore:
			r.Header.Del("Range")
			next.ServeHTTP(w, r)
			return
		case FaultRetry:
			sig := r.URL.String() + " " + rng
			mu.Lock()
			first := !seen[sig]
			seen[sig] = true
			mu.Unlock()
			if first {
				w.Header().Set("Content-Type", "application/xml")
				w.WriteHeader(http.StatusServiceUnavailable)
				w.Write([]byte(`<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>slow down</Message></Error>`))
				return
			}
			next.ServeHTTP(w, r)
			return
		case FaultOverlong:
			if first, last, ok := parseBounded(rng); ok {
				r.Header.Set("Range", "bytes="+strconv.FormatInt(first, 10)+"-"+strconv.FormatInt(last+7, 10))
			}
		}
		rec := httptest.NewRecorder()
		next.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		switch fault {
		case FaultShift:
			if cr := rec.Header().Get("Content-Range"); cr != "" {
				w.Header().Set("Content-Range", shiftContentRange(cr))
			}
		case FaultChunked:
			w.Header().Del("Content-Length")
			w.WriteHeader(rec.Code)
			w.(http.Flusher).Flush()
			w.Write(body)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		if fault == FaultTruncate && len(body) > 0 {
			w.Write(body[:len(body)/2])
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		}
		w.Write(body)
	})
}

// parseBounded parses "bytes=first-last".
func parseBounded(rng string) (first, last int64, ok bool) {
	spec, ok := strings.CutPrefix(rng, "bytes=")
	a, b, ok2 := strings.Cut(spec, "-")
	if !ok || !ok2 || a == "" || b == "" {
		return 0, 0, false
	}
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(b, 10, 64)
	return first, last, err1 == nil && err2 == nil
}

// shiftContentRange moves "bytes first-last/total" one byte later.
func shiftContentRange(cr string) string {
	spec, ok := strings.CutPrefix(cr, "bytes ")
	rng, total, ok2 := strings.Cut(spec, "/")
	if !ok || !ok2 {
		return cr
	}
	first, last, ok := parseBounded("bytes=" + rng)
	if !ok {
		return cr
	}
	return "bytes " + strconv.FormatInt(first+1, 10) + "-" + strconv.FormatInt(last+1, 10) + "/" + total
}

// RawAnswer returns a handler that answers every request by writing
// answer(request) to the bare connection and closing it: for fuzzing how a
// client parses status lines, headers and bodies that net/http would
// never write.
func RawAnswer(answer func(r *http.Request) []byte) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		defer conn.Close()
		buf.Write(answer(r))
		buf.Flush()
	})
}
