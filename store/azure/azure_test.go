package azure_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/bloberror"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/azure"
	"github.com/gozarr/gozarr/store/storetest"
	"github.com/gozarr/gozarr/store/storeurl"
	"github.com/gozarr/gozarr/store/zip/ziptest"
)

// Environment variables naming an Azure Blob emulator (see .ci/azurite.sh).
const (
	envEndpoint  = "GOZARR_AZURE_ENDPOINT"  // blob service URL, e.g. http://127.0.0.1:10000/devstoreaccount1
	envAccount   = "GOZARR_AZURE_ACCOUNT"   // e.g. devstoreaccount1
	envKey       = "GOZARR_AZURE_KEY"       // the account's shared key
	envContainer = "GOZARR_AZURE_CONTAINER" // a container the tests may create and write to
)

type emu struct{ endpoint, account, key, container string }

// emulator returns the emulator's settings, or skips t.
func emulator(t *testing.T) emu {
	t.Helper()
	e := emu{os.Getenv(envEndpoint), os.Getenv(envAccount), os.Getenv(envKey), os.Getenv(envContainer)}
	if e.endpoint == "" || e.account == "" || e.key == "" || e.container == "" {
		t.Skipf("no Azure Blob emulator: set %s, %s, %s and %s (eval \"$(bash .ci/azurite.sh start)\" starts Azurite)",
			envEndpoint, envAccount, envKey, envContainer)
	}
	return e
}

func (e emu) open(t *testing.T, containerName, prefix string, opts ...azure.Option) *azure.Store {
	t.Helper()
	st, err := azure.Open(context.Background(), e.account, containerName, prefix,
		append([]azure.Option{azure.WithEndpoint(e.endpoint), azure.WithSharedKey(e.key), azure.WithRetry(2, 0)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// newStore opens a store on a fresh prefix of the emulator's container
// (creating the container if need be) and deletes what it holds when t
// ends.
func newStore(t *testing.T) *azure.Store {
	t.Helper()
	e := emulator(t)
	st := e.open(t, e.container, storetest.UniquePrefix("gozarr-test"))
	if _, err := st.Client().Create(context.Background(), nil); err != nil && !bloberror.HasCode(err, bloberror.ContainerAlreadyExists) {
		t.Fatalf("creating container: %v", err)
	}
	storetest.Cleanup(t, st)
	return st
}

// TestCloud runs storetest's cloud-store tests: conformance, conditional
// reads and a missing container on the emulator, a done context, retries.
func TestCloud(t *testing.T) {
	storetest.TestCloud(t, storetest.Cloud{
		New: func(t *testing.T) store.Store { return newStore(t) },
		At: func(t *testing.T, endpoint string, attempts int) store.Store {
			st, err := azure.Open(context.Background(), "acct", "c", "p", azure.WithEndpoint(endpoint+"/acct"), azure.WithAnonymous(),
				azure.WithRetry(attempts, time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			return st
		},
		Missing:    func(t *testing.T) store.Store { return emulator(t).open(t, "no-such-container-gozarr", "") },
		ErrMissing: azure.ErrContainer,
	})
}

// TestStoreURL opens az:// and https:// URLs through storeurl, which
// importing the package registered, with the emulator's connection string
// in the environment.
func TestStoreURL(t *testing.T) {
	e := emulator(t)
	src := newStore(t)
	ctx := context.Background()
	if err := src.Set(ctx, "zarr.json", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	t.Setenv("AZURE_STORAGE_CONNECTION_STRING", fmt.Sprintf("DefaultEndpointsProtocol=http;AccountName=%s;AccountKey=%s;BlobEndpoint=%s;", e.account, e.key, e.endpoint))
	for _, loc := range []string{"az://" + e.container + "/" + src.Prefix(), "abfs://" + e.container + "/" + src.Prefix()} {
		r, err := storeurl.Open(ctx, loc)
		if err != nil {
			t.Fatalf("Open(%q): %v", loc, err)
		}
		st, ok := r.(*azure.Store)
		if !ok {
			t.Fatalf("storeurl.Open(%q) = %T, want *azure.Store", loc, r)
		}
		if got, err := st.Get(ctx, "zarr.json", store.Full()); err != nil || string(got) != "{}" {
			t.Errorf("%s: Get = %q, %v", loc, got, err)
		}
	}
}

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		loc  string
		want azure.Location
		ok   bool
	}{
		{"az://c/p/x.zarr", azure.Location{Container: "c", Prefix: "p/x.zarr"}, true},
		{"abfs://c", azure.Location{Container: "c"}, true},
		{"abfss://c@acct.dfs.core.windows.net/p", azure.Location{Account: "acct", Container: "c", Prefix: "p"}, true},
		{"az://c@acct.blob.core.windows.net/p/", azure.Location{Account: "acct", Container: "c", Prefix: "p/"}, true},
		{"https://acct.blob.core.windows.net/c/p", azure.Location{Account: "acct", Container: "c", Prefix: "p"}, true},
		{"https://ACCT.blob.core.windows.net/c", azure.Location{Account: "acct", Container: "c"}, true},
		{"https://acct.blob.core.windows.net/", azure.Location{}, false},
		{"abfs://c@acct.example.com/p", azure.Location{}, false},
		{"https://example.com/c/p", azure.Location{}, false},
		{"az:///p", azure.Location{}, false},
		{"gs://b/p", azure.Location{}, false},
	} {
		got, err := azure.ParseURL(tc.loc)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", tc.loc, got, err, tc.want)
		}
		if err != nil && !errors.Is(err, storeurl.ErrInvalidURL) {
			t.Errorf("ParseURL(%q): err %v does not wrap storeurl.ErrInvalidURL", tc.loc, err)
		}
	}
}

// TestOverlongBody: a ranged download answered with more than the range is
// an error, and reads at most one byte past it.
func TestOverlongBody(t *testing.T) {
	body := strings.Repeat("0123456789", 1000)
	var sent atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var a, b int
		fmt.Sscanf(r.Header.Get("x-ms-range"), "bytes=%d-%d", &a, &b)
		w.Header().Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", a, b, len(body)))
		w.WriteHeader(http.StatusPartialContent)
		n, _ := w.Write([]byte(body[a:])) // everything from a, not just to b
		sent.Add(int64(n))
	}))
	defer srv.Close()
	st, err := azure.Open(context.Background(), "acct", "c", "", azure.WithEndpoint(srv.URL+"/acct"), azure.WithAnonymous(), azure.WithRetry(1, 0))
	if err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(context.Background(), "k", store.OffsetLen(10, 5))
	if err == nil {
		t.Errorf("Get(Range(10, 5)) = %q, want an error for the %d-byte answer", got, len(body)-10)
	}
	var ke *store.KeyError
	if !errors.As(err, &ke) || ke.Key != "k" {
		t.Errorf("err %v does not name the key", err)
	}
}

// TestZipOverAzure runs the reader conformance suite over a zip store
// reading an archive held in the emulator.
func TestZipOverAzure(t *testing.T) {
	emulator(t)
	ziptest.TestOver(t, func(t *testing.T) store.Store { return newStore(t) })
}
