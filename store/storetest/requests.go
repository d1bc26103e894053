package storetest

import (
	"context"
	"testing"

	"github.com/gozarr/gozarr/store"
)

// RangeRequest is a read of the value "0123456789" and the one request a
// remote store over HTTP (store/s3, store/http: objstore's layer) sends
// for it: its method and Range header, and the bytes it yields.
type RangeRequest struct {
	Range  store.ByteRange
	Method string // "GET", or "HEAD" for a zero-length range
	Header string // the Range header sent, "" for none
	Want   string
}

// RangeRequests lists a read of every range form, in the order
// CheckRangeRequests sends them: the whole value, a bounded range, open
// ranges from an offset (0 sends no header), suffixes, a range past the
// end (empty), and zero-length ranges (a HEAD, so that a missing key is
// still store.ErrNotFound).
func RangeRequests() []RangeRequest {
	return []RangeRequest{
		{store.Full(), "GET", "", "0123456789"},
		{store.OffsetLen(2, 3), "GET", "bytes=2-4", "234"},
		{store.From(7), "GET", "bytes=7-", "789"},
		{store.From(0), "GET", "", "0123456789"},
		{store.Suffix(4), "GET", "bytes=-4", "6789"},
		{store.OffsetLen(20, 5), "GET", "bytes=20-24", ""},
		{store.OffsetLen(3, 0), "HEAD", "", ""},
		{store.Suffix(0), "HEAD", "", ""},
		{store.Suffix(2), "GET", "bytes=-2", "89"},
	}
}

// CheckRangeRequests reads key, which holds "0123456789", from st with
// each of RangeRequests, and checks the bytes (never nil) and that rec,
// the recorder st sends through, saw exactly the one request listed.
// header, when not nil, returns the Range header expected for the i-th
// read instead of its Header (a server found to ignore ranges gets none).
func CheckRangeRequests(t *testing.T, st store.Reader, key string, rec *Recorder, header func(i int, rr RangeRequest) string) {
	t.Helper()
	for i, rr := range RangeRequests() {
		rec.Reset()
		got, err := st.Get(context.Background(), key, rr.Range)
		if err != nil || got == nil || string(got) != rr.Want {
			t.Errorf("Get(%v) = %q, %v; want %q", rr.Range, got, err, rr.Want)
		}
		want := rr.Header
		if header != nil {
			want = header(i, rr)
		}
		reqs := rec.Requests("")
		if len(reqs) != 1 || reqs[0].Method != rr.Method || reqs[0].Range != want {
			t.Errorf("Get(%v) sent %+v; want one %s with Range %q", rr.Range, reqs, rr.Method, want)
		}
	}
}
