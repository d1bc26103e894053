package zarr_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/zarr"
)

// TestS3RequestEconomy opens a sharded array on S3 and reads one inner
// chunk: that must cost the metadata GET, one suffix GET for the shard index
// and one ranged GET for the chunk, nothing else (the metadata GET asks for
// the metadata size limit plus one byte). Reading it again costs one
// ranged GET (the index is cached).
func TestS3RequestEconomy(t *testing.T) {
	ctx := context.Background()
	srv, ok := s3test.LookupEnv()
	if !ok {
		srv = s3test.NewFake(t, "gozarr")
	}
	const name = "v3_shard_end_edges" // float32 [54 40], shards [24 21], inner [8 7], index at end
	uploadRef(t, srv, "economy", name)
	rec := s3test.NewRecorder(nil)
	st, err := s3.Open(ctx, srv.Bucket, "economy", srv.Options(s3.WithHTTPClient(rec.Client()))...)
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.OpenArray(ctx, st, name+".zarr")
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := a.ReadBytes(ctx, nd.Range(8, 16), nd.Range(7, 14)) // inner chunk (1, 1) of shard (0, 0)
	if err != nil {
		t.Fatal(err)
	}
	want, err := npy.ReadFile(filepath.Join(refDir, name+".npy"))
	if err != nil {
		t.Fatal(err)
	}
	sel, _ := nd.Normalize([]nd.Item{nd.Range(8, 16), nd.Range(7, 14)}, want.Shape)
	if exp := gather(want.Data, want.Shape, 4, sel); string(exp) != string(got) {
		t.Fatal("values differ from the .npy")
	}
	reqs := rec.Requests("")
	var kinds []string
	for _, r := range rec.Requests("GET") {
		switch {
		case strings.HasSuffix(r.Path, "/zarr.json") && r.Range == fmt.Sprintf("bytes=0-%d", zarr.DefaultMaxMetadataBytes):
			kinds = append(kinds, "metadata")
		case strings.HasPrefix(r.Range, "bytes=-"):
			kinds = append(kinds, "suffix")
		case strings.HasPrefix(r.Range, "bytes="):
			kinds = append(kinds, "range")
		default:
			kinds = append(kinds, "other:"+r.Path)
		}
	}
	if strings.Join(kinds, ",") != "metadata,suffix,range" || len(reqs) != 3 {
		t.Fatalf("requests %v (%d in all), want metadata, suffix, range", kinds, len(reqs))
	}
	rec.Reset()
	if _, _, err := a.ReadBytes(ctx, nd.Range(8, 16), nd.Range(7, 14)); err != nil {
		t.Fatal(err)
	}
	if n := len(rec.Requests("")); n != 1 {
		t.Fatalf("warm read made %d requests, want 1", n)
	}
}

// uploadRef copies the reference array name into srv under prefix.
func uploadRef(t *testing.T, srv *s3test.Server, prefix, name string) {
	t.Helper()
	up := srv.Store(t, prefix)
	root := filepath.Join(refDir, name+".zarr")
	err := filepath.Walk(root, func(p string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(refDir, p)
		return up.Set(context.Background(), filepath.ToSlash(rel), b)
	})
	if err != nil {
		t.Fatal(err)
	}
}
