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
	// one attempt per request and no credentials.
	At func(t *testing.T, endpoint string) store.Store
}

// TestCloud runs the tests every cloud store shares: TestStore (with its
// capability checks) and TestConditionalReader on the emulator, and a done
// context failing every call before any request.
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
	t.Run("Cancelled", func(t *testing.T) {
		var requests atomic.Int64
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			requests.Add(1)
			http.Error(w, "no", http.StatusInternalServerError)
		}))
		defer srv.Close()
		st := c.At(t, srv.URL)
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
}
