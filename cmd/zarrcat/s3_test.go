package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/internal/refdata"
	"github.com/gozarr/gozarr/store/s3/s3test"
)

// s3Server returns the real S3 server CI starts (.ci/s3server.sh), or the
// in-process fake when none is configured, and points the standard AWS
// environment at it, as a zarrcat user would.
func s3Server(t *testing.T) *s3test.Server {
	srv, ok := s3test.LookupEnv()
	if !ok {
		srv = s3test.NewFake(t, "gozarr")
		t.Log("GOZARR_S3_* unset: using the in-process fake S3 server")
	}
	t.Setenv("AWS_ENDPOINT_URL_S3", srv.Endpoint)
	t.Setenv("AWS_ACCESS_KEY_ID", srv.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", srv.SecretKey)
	t.Setenv("AWS_REGION", srv.Region)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	return srv
}

// TestGetFromS3 uploads the whole reference corpus to S3 and reads every
// array through "zarrcat get --format npy s3://bucket/prefix/case.zarr",
// comparing with the expected .npy.
func TestGetFromS3(t *testing.T) {
	srv := s3Server(t)
	ctx := context.Background()
	prefix := fmt.Sprintf("refdata-%d", time.Now().UnixNano())
	up := srv.Store(t, prefix)
	err := filepath.WalkDir(refDir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(refDir, path)
		if err != nil {
			return err
		}
		if !strings.Contains(rel, ".zarr/") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return up.Set(ctx, filepath.ToSlash(rel), b)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range refdata.Cases(t) {
		t.Run(c.Name, func(t *testing.T) {
			var out bytes.Buffer
			url := "s3://" + srv.Bucket + "/" + prefix + "/" + strings.TrimSuffix(c.Path, "/")
			if err := run(ctx, []string{"get", "--format", "npy", url}, &out, &out); err != nil {
				t.Fatal(err)
			}
			got, err := npy.Read(&out)
			if err != nil {
				t.Fatal(err)
			}
			want := c.ExpectedArray(t)
			if got.Descr != want.Descr || !equalInts(got.Shape, want.Shape) || !bytes.Equal(got.Data, want.Data) {
				t.Fatalf("got %s %v, want %s %v", got.Descr, got.Shape, want.Descr, want.Shape)
			}
		})
	}
}

// TestConsolidatedStaleOnS3 (issue 27): the stale-consolidated warning of
// tree, ls and info holds on a remote store too: a consolidated group on
// S3 with a node written after consolidation names it; once consolidated
// again, nothing is said.
func TestConsolidatedStaleOnS3(t *testing.T) {
	srv := s3Server(t)
	ctx := context.Background()
	dir := t.TempDir()
	g := filepath.Join(dir, "c.zarr")
	runOK(t, "cp", filepath.Join(refDir, "v3_group.zarr"), g)
	runOK(t, "consolidate", g)
	if err := os.CopyFS(filepath.Join(g, "new"), os.DirFS(filepath.Join(refDir, "v3_dtype_int16.zarr"))); err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("stale-%d", time.Now().UnixNano())
	up := srv.Store(t, prefix)
	err := filepath.WalkDir(g, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(g, path)
		if err != nil {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return up.Set(ctx, filepath.ToSlash(rel), b)
	})
	if err != nil {
		t.Fatal(err)
	}
	url := "s3://" + srv.Bucket + "/" + prefix
	for _, args := range [][]string{{"tree", url}, {"ls", "--depth", "1", url}, {"info", url}} {
		_, warn := runWarn(t, args...)
		if !strings.Contains(warn, url+`: its consolidated metadata does not list "new"`) || !strings.Contains(warn, "'zarrcat consolidate "+url+"'") {
			t.Errorf("%v: warning %q", args, warn)
		}
	}
	runOK(t, "consolidate", g)
	b, err := os.ReadFile(filepath.Join(g, "zarr.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := up.Set(ctx, "zarr.json", b); err != nil {
		t.Fatal(err)
	}
	if _, warn := runWarn(t, "tree", url); warn != "" {
		t.Errorf("tree after consolidate warns %q", warn)
	}
}
