package gcs_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/gozarr/gozarr/store/gcs"
)

// TestDefaultAuth: Application Default Credentials that yield a token are
// used; ones that do not (here: "on Google Cloud" by GCE_METADATA_HOST, but
// its metadata server refuses) mean anonymous access, so public buckets
// still read.
func TestDefaultAuth(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // no gcloud credentials
	t.Setenv("CLOUDSDK_CONFIG", t.TempDir())
	t.Setenv("GCE_METADATA_HOST", "127.0.0.1:1")
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", "")
	if _, anon, err := gcs.DefaultAuth(context.Background()); err != nil || !anon {
		t.Errorf("DefaultAuth with a refusing metadata server: anonymous %v, %v; want anonymous", anon, err)
	}
	// A credentials file that cannot give a token is no better.
	bad := filepath.Join(t.TempDir(), "creds.json")
	if err := os.WriteFile(bad, []byte(`{"type":"authorized_user","client_id":"x","client_secret":"y","refresh_token":"z","token_uri":"http://127.0.0.1:1/token"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", bad)
	if _, anon, err := gcs.DefaultAuth(context.Background()); err != nil || !anon {
		t.Errorf("DefaultAuth with an unusable credentials file: anonymous %v, %v; want anonymous", anon, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := gcs.DefaultAuth(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("DefaultAuth with a done context: err = %v", err)
	}
}
