package main

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// countingTransport counts the response body bytes that pass through it
// and, when trace is set, records when each request started and got its
// response headers. It is safe for concurrent use.
type countingTransport struct {
	next  http.RoundTripper
	bytes atomic.Int64
	trace bool

	mu     sync.Mutex
	origin time.Time
	spans  []reqSpan
}

// reqSpan is one request's start and the arrival of its response headers,
// from the origin set by reset.
type reqSpan struct {
	start, end time.Duration
	rng        string
}

// reset zeroes the counters and makes now the timeline's origin.
func (c *countingTransport) reset() {
	c.bytes.Store(0)
	c.mu.Lock()
	c.origin, c.spans = time.Now(), nil
	c.mu.Unlock()
}

func (c *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	t0 := time.Now()
	resp, err := c.next.RoundTrip(req)
	if c.trace {
		t1 := time.Now()
		c.mu.Lock()
		c.spans = append(c.spans, reqSpan{start: t0.Sub(c.origin), end: t1.Sub(c.origin), rng: req.Header.Get("Range")})
		c.mu.Unlock()
	}
	if resp != nil && resp.Body != nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &c.bytes}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// selfCPU returns the user plus system CPU time this process has used.
func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// clockTick is the kernel's USER_HZ, the unit of /proc/<pid>/stat times; it
// is 100 on every Linux platform Go supports.
const clockTick = 100

// procCPU returns the user plus system CPU time process pid has used, read
// from /proc/<pid>/stat, and false when it cannot be read (no such process,
// not Linux).
func procCPU(pid int) (time.Duration, bool) {
	if pid <= 0 {
		return 0, false
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The command name is in parentheses and may hold spaces: fields are
	// counted after the last ')'. utime and stime are fields 14 and 15,
	// that is the 12th and 13th after the name.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, false
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(ut+st) * time.Second / clockTick, true
}

// serverPID returns the versitygw pid that .ci/s3server.sh wrote to
// $GOZARR_S3_STATE/pid (default /tmp/gozarr-s3/pid), or 0.
func serverPID() int {
	dir := os.Getenv("GOZARR_S3_STATE")
	if dir == "" {
		dir = "/tmp/gozarr-s3"
	}
	b, err := os.ReadFile(dir + "/pid")
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		return 0
	}
	return pid
}

// timeline summarises the recorded requests: how many started in each
// slot of width d since the origin (the latency "rounds"), as
// "slot:count" pairs, and when the last response arrived.
func (c *countingTransport) timeline(d time.Duration) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if d <= 0 || len(c.spans) == 0 {
		return ""
	}
	counts := map[int]int{}
	last, maxSlot := time.Duration(0), 0
	for _, s := range c.spans {
		k := int(s.start / d)
		counts[k]++
		maxSlot = max(maxSlot, k)
		last = max(last, s.end)
	}
	var b strings.Builder
	for k := 0; k <= maxSlot; k++ {
		if counts[k] > 0 {
			fmt.Fprintf(&b, "%d:%d ", k, counts[k])
		}
	}
	fmt.Fprintf(&b, "(starts per %v slot; last response at %v)", d, last.Round(time.Millisecond))
	return b.String()
}
