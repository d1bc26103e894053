package azure_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/gozarr/gozarr/store/azure"
)

// TestAnonymousFallback: with no credentials in the environment and none
// from the default chain, Open uses anonymous access: requests carry no
// Authorization header, so public containers read.
func TestAnonymousFallback(t *testing.T) {
	for _, k := range []string{"AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGE_KEY", "AZURE_STORAGE_SAS_TOKEN",
		"AZURE_CLIENT_ID", "AZURE_TENANT_ID", "AZURE_CLIENT_SECRET", "AZURE_FEDERATED_TOKEN_FILE", "IDENTITY_ENDPOINT", "MSI_ENDPOINT"} {
		t.Setenv(k, "")
	}
	t.Setenv("HOME", t.TempDir())                                       // no Azure CLI login
	t.Setenv("PATH", t.TempDir())                                       // no az or azd binaries
	t.Setenv("AZURE_POD_IDENTITY_AUTHORITY_HOST", "http://127.0.0.1:1") // nor a managed identity endpoint
	var authed, requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		if r.Header.Get("Authorization") != "" {
			authed.Add(1)
		}
		w.Header().Set("Content-Length", "3")
		w.Header().Set("ETag", `"x"`)
	}))
	defer srv.Close()
	st, err := azure.Open(context.Background(), "acct", "c", "", azure.WithEndpoint(srv.URL+"/acct"), azure.WithRetry(1, 0))
	if err != nil {
		t.Fatalf("Open without credentials: %v", err)
	}
	if n, err := st.Size(context.Background(), "k"); err != nil || n != 3 {
		t.Errorf("Size = %d, %v", n, err)
	}
	if requests.Load() == 0 || authed.Load() != 0 {
		t.Errorf("%d of %d requests carried credentials", authed.Load(), requests.Load())
	}
}
