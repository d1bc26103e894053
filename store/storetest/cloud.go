package storetest

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/gozarr/gozarr/store"
)

// Cloud is a remote store over a cloud SDK (store/gcs, store/azure) for
// TestCloud.
type Cloud struct {
	// New opens a store on a fresh prefix of the emulator, emptied when t
	// ends (it skips t when no emulator is configured).
	New func(t *testing.T) store.Store
	// At opens a store whose requests go to the server at endpoint, with
	// attempts attempts per request (pauses of at most a millisecond) and
	// no credentials.
	At func(t *testing.T, endpoint string, attempts int) store.Store
	// Missing opens a store over a bucket (container) the emulator does
	// not have, and ErrMissing is what its reads and listings wrap
	// (gcs.ErrBucket, azure.ErrContainer): a configuration error, never
	// store.ErrNotFound.
	Missing    func(t *testing.T) store.Store
	ErrMissing error
}

// TestCloud runs the tests every cloud store shares: TestStore (with its
// capability checks), TestConditionalReader and a missing bucket on the
// emulator, a done
// context failing every call before any request, and retries made by the
// store's layer alone (a server answering 503 sees exactly the configured
// attempts: the SDK adds none; a conditional write is re-sent only after a
// check).
func TestCloud(t *testing.T, c Cloud) {
	t.Run("Conformance", func(t *testing.T) { TestStore(t, c.New) })
	t.Run("ConditionalReads", func(t *testing.T) {
		st := c.New(t)
		cr, ok := st.(interface {
			store.ConditionalReader
			ReadCondition(ctx context.Context, key string) (store.ReadCondition, error)
		})
		if !ok {
			t.Fatalf("%T has no conditional reads", st)
		}
		TestConditionalReader(t, st, cr, cr.ReadCondition)
	})
	t.Run("MissingBucket", func(t *testing.T) {
		st := c.Missing(t)
		ctx := context.Background()
		for _, br := range []store.ByteRange{store.Full(), store.OffsetLen(0, 5)} {
			if _, err := st.Get(ctx, "k", br); !errors.Is(err, c.ErrMissing) || errors.Is(err, store.ErrNotFound) {
				t.Errorf("Get(%v) in a missing bucket: err = %v, want %v", br, err, c.ErrMissing)
			}
		}
		if _, _, err := st.ListDir(ctx, ""); !errors.Is(err, c.ErrMissing) {
			t.Errorf("ListDir of a missing bucket: err = %v, want %v", err, c.ErrMissing)
		}
	})
	t.Run("Cancelled", func(t *testing.T) {
		url, requests := failing(t, http.StatusInternalServerError)
		st := c.At(t, url, 1)
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		for _, br := range []store.ByteRange{store.Full(), store.Suffix(4), store.OffsetLen(0, 0)} {
			if _, err := st.Get(ctx, "k", br); !errors.Is(err, context.Canceled) {
				t.Errorf("Get(%v): err = %v, want context.Canceled", br, err)
			}
		}
		if err := st.Set(ctx, "k", []byte("v")); !errors.Is(err, context.Canceled) {
			t.Errorf("Set: err = %v, want context.Canceled", err)
		}
		if err := st.Delete(ctx, "k"); !errors.Is(err, context.Canceled) {
			t.Errorf("Delete: err = %v, want context.Canceled", err)
		}
		if n := requests.Load(); n != 0 {
			t.Errorf("%d requests with a done context", n)
		}
	})
	t.Run("Retries", func(t *testing.T) {
		url, requests := failing(t, http.StatusServiceUnavailable)
		for _, attempts := range []int{1, 3} {
			st := c.At(t, url, attempts)
			for name, call := range map[string]func() error{
				"Get": func() error { _, err := st.Get(context.Background(), "k", store.OffsetLen(0, 4)); return err },
				"Set": func() error { return st.Set(context.Background(), "k", []byte("v")) },
			} {
				requests.Store(0)
				err := call()
				var ke *store.KeyError
				if !errors.As(err, &ke) || ke.Key != "k" {
					t.Errorf("%s from an always-503 server: %v, want a KeyError for k", name, err)
				}
				if n := requests.Load(); n != int64(attempts) {
					t.Errorf("%s with %d attempts: the server saw %d requests", name, attempts, n)
				}
			}
		}
		// A conditional write is sent again only after a check that its
		// condition still holds: the check fails here too, so the write
		// goes once and the check once, never three blind writes.
		cw := store.CapabilitiesOf(c.At(t, url, 3)).Conditional
		if cw == nil {
			t.Fatal("no conditional writes")
		}
		requests.Store(0)
		if err := cw.SetIfVersion(context.Background(), "k", []byte("v"), ""); err == nil {
			t.Error("SetIfVersion against an always-503 server succeeded")
		}
		if n := requests.Load(); n != 2 {
			t.Errorf("SetIfVersion with 3 attempts: the server saw %d requests, want 2 (the write, its check)", n)
		}
	})
}

// failing starts a server answering every request with code, and returns
// its URL and its count of requests.
func failing(t *testing.T, code int) (string, *atomic.Int64) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.Error(w, http.StatusText(code), code)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, &requests
}
