package icechunk_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/store/virtual"
	"github.com/gozarr/gozarr/zarr"
)

// webObject is an HTTP server of one object, data/blob.bin, with an ETag
// and a modification time that a test may change.
type webObject struct {
	mu       sync.Mutex
	data     []byte
	etag     string
	modified time.Time
	gets     int
}

func (o *webObject) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/data/blob.bin" {
		http.NotFound(w, r)
		return
	}
	o.mu.Lock()
	data, etag, mod := o.data, o.etag, o.modified
	o.gets++
	o.mu.Unlock()
	w.Header().Set("ETag", etag)
	http.ServeContent(w, r, "blob.bin", mod, bytes.NewReader(data))
}

func (o *webObject) set(data []byte, etag string, mod time.Time) {
	o.mu.Lock()
	o.data, o.etag, o.modified = data, etag, mod
	o.mu.Unlock()
}

// coreVirtual is what virtual_http.mjs reports.
type coreVirtual struct {
	Keys map[string]*struct {
		Data  []byte `json:"data"`
		Error string `json:"error"`
	} `json:"keys"`
	Requests []struct {
		URL          string  `json:"url"`
		Start        int64   `json:"start"`
		End          int64   `json:"end"`
		ETag         *string `json:"etag"`
		LastModified *int64  `json:"last_modified"`
	} `json:"requests"`
	Commit    string   `json:"commit"`
	Manifests []string `json:"manifests"`
}

// runCoreVirtual runs virtual_http.mjs on the repository at dir.
func runCoreVirtual(t *testing.T, dir, prefix string, write ...string) coreVirtual {
	t.Helper()
	var v coreVirtual
	runCore(t, &v, "virtual_http.mjs", append([]string{dir, prefix}, write...)...)
	return v
}

// TestCoreVirtualHTTP checks virtual refs both ways with the official
// core, spec 1 and 2, the targets served over HTTP (the only virtual
// chunks its wasm build reads). gozarr writes refs by absolute URL and by
// vcc:// container, without a checksum, with the target's ETag, with its
// modification time, and with a wrong ETag; the core reads the first
// three with gozarr's bytes, was asked for exactly the checksums gozarr
// recorded, and refuses the fourth. The core then commits a native chunk
// in its place, rewriting the array's manifest with the other virtual refs
// (its wasm build cannot set virtual refs itself); gozarr reads that
// commit's virtual chunks through store/http, and once the target changes,
// the chunks with a checksum are ErrChanged, not the new bytes.
func TestCoreVirtualHTTP(t *testing.T) {
	refJS(t)
	ctx := context.Background()
	blob := make([]byte, 64)
	for i := range 16 {
		binary.LittleEndian.PutUint32(blob[4*i:], uint32(1000+i))
	}
	native := make([]byte, 16)
	for i := range 4 {
		binary.LittleEndian.PutUint32(native[4*i:], uint32(2000+i))
	}
	when := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	obj := &webObject{}
	srv := httptest.NewServer(obj)
	defer srv.Close()
	prefix := srv.URL + "/data/"
	for _, spec := range []int{1, 2} {
		obj.set(blob, `"v1"`, when)
		dir := t.TempDir()
		st, err := fs.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		r, err := icechunk.Create(ctx, st, icechunk.WithSpecVersion(spec),
			icechunk.WithConfigContainers(icechunk.Container{Name: "web", URLPrefix: prefix},
				// (containers the core does not use here, to show it reads their configuration)
				icechunk.Container{URLPrefix: "s3://gozarr-virtual/p/", S3Region: "us-east-1", S3Endpoint: "http://127.0.0.1:1", S3Anonymous: true, S3AllowHTTP: true, S3PathStyle: true}))
		if err != nil {
			t.Fatal(err)
		}
		s, err := r.Session(ctx, "main")
		if err != nil {
			t.Fatal(err)
		}
		meta, err := zarr.NewArrayMetadata([]int{20}, dtype.TypeInt32, []int{4})
		if err != nil {
			t.Fatal(err)
		}
		a, err := zarr.CreateArray(ctx, s, "v", meta)
		if err != nil {
			t.Fatal(err)
		}
		if err := a.WriteBytes(ctx, native, nd.Range(16, 20)); err != nil {
			t.Fatal(err)
		}
		refs := map[string]virtual.Ref{
			"v/c/0": {URL: prefix + "blob.bin", Offset: 0, Length: 16},
			"v/c/1": {URL: prefix + "blob.bin", Offset: 16, Length: 16, Checksum: virtual.Checksum{ETag: `"v1"`}},
			"v/c/2": {URL: "vcc://web/blob.bin", Offset: 32, Length: 16, Checksum: virtual.Checksum{LastModified: when}},
			"v/c/3": {URL: prefix + "blob.bin", Offset: 48, Length: 16, Checksum: virtual.Checksum{ETag: `"stale"`}},
		}
		for key, ref := range refs {
			if err := s.SetVirtual(ctx, key, ref); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := s.Commit(ctx, "virtual refs", nil); err != nil {
			t.Fatal(err)
		}
		encoded, _, err := a.ReadBytes(ctx, nd.Range(16, 20)) // the native chunk as stored
		if err != nil || !bytes.Equal(encoded, native) {
			t.Fatalf("spec %d: native chunk % x %v", spec, encoded, err)
		}

		// gozarr → core
		core := runCoreVirtual(t, dir, prefix)
		for i, key := range []string{"v/c/0", "v/c/1", "v/c/2"} {
			k := core.Keys[key]
			if k == nil || k.Error != "" || !bytes.Equal(k.Data, blob[16*i:16*i+16]) {
				t.Errorf("spec %d: the core reads %s as %+v, want % x", spec, key, k, blob[16*i:16*i+16])
			}
		}
		if k := core.Keys["v/c/3"]; k == nil || k.Error == "" {
			t.Errorf("spec %d: the core reads v/c/3 (a wrong ETag) as %+v, want an error", spec, k)
		}
		if k := core.Keys["v/c/4"]; k == nil || !bytes.Equal(k.Data, native) {
			t.Errorf("spec %d: the core reads the native chunk as %+v", spec, k)
		}
		asked := map[int64]string{}
		for _, q := range core.Requests {
			if q.URL != prefix+"blob.bin" || q.End-q.Start != 16 {
				t.Errorf("spec %d: the core fetched %+v", spec, q)
			}
			c := ""
			if q.ETag != nil {
				c += "etag " + *q.ETag
			}
			if q.LastModified != nil {
				c += "modified " + time.Unix(*q.LastModified, 0).UTC().Format(time.RFC3339)
			}
			asked[q.Start] = c
		}
		want := map[int64]string{0: "", 16: `etag "v1"`, 32: "modified " + when.Format(time.RFC3339), 48: `etag "stale"`}
		for off, c := range want {
			if got, ok := asked[off]; !ok || got != c {
				t.Errorf("spec %d: the core's read at %d asked for %q (seen: %t), gozarr recorded %q", spec, off, got, ok, c)
			}
		}

		// core → gozarr: the core rewrites the manifest, the virtual refs carried on
		before, err := os.ReadDir(filepath.Join(dir, "manifests"))
		if err != nil {
			t.Fatal(err)
		}
		fixed := runCoreVirtual(t, dir, prefix, "v/c/3", base64.StdEncoding.EncodeToString(blob[48:]))
		if fixed.Commit == "" || len(fixed.Manifests) == 0 {
			t.Fatalf("spec %d: the core's commit: %+v", spec, fixed)
		}
		for _, m := range fixed.Manifests {
			if slices.ContainsFunc(before, func(e os.DirEntry) bool { return e.Name() == m }) {
				t.Errorf("spec %d: the core's commit kept gozarr's manifest %s, want one it wrote", spec, m)
			}
		}
		res, err := virtual.New(virtual.Allow(prefix))
		if err != nil {
			t.Fatal(err)
		}
		r2 := openRepo(t, dir, icechunk.WithVirtual(res)) // vcc://web from the configuration
		snap, err := r2.CheckoutRef(ctx, "main")
		if err != nil {
			t.Fatal(err)
		}
		if snap.ID().String() != fixed.Commit {
			t.Fatalf("spec %d: main is %v, the core committed %s", spec, snap.ID(), fixed.Commit)
		}
		ga, err := zarr.OpenArray(ctx, snap, "v")
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := ga.ReadBytes(ctx)
		if err != nil {
			t.Fatalf("spec %d: reading the core's commit: %v", spec, err)
		}
		if want := append(slices.Clone(blob), native...); !bytes.Equal(got, want) {
			t.Errorf("spec %d: the core's commit reads % x, want % x", spec, got, want)
		}
		// the target changed: the ETag'd chunk is an error, never the new bytes
		changed := bytes.Repeat([]byte{0xee}, 64)
		obj.set(changed, `"v2"`, when.Add(time.Hour))
		for _, at := range []int{4, 8} { // the ETag, the modification time
			if b, _, err := ga.ReadBytes(ctx, nd.Range(at, at+4)); !errors.Is(err, virtual.ErrChanged) || !strings.Contains(err.Error(), "blob.bin") {
				t.Errorf("spec %d: chunk %d of a changed target: % x %v, want ErrChanged naming blob.bin", spec, at/4, b, err)
			}
		}
		if b, _, err := ga.ReadBytes(ctx, nd.Range(0, 4)); err != nil || !bytes.Equal(b, changed[:16]) {
			t.Errorf("spec %d: the chunk with no checksum: % x %v, want the new bytes", spec, b, err)
		}
	}
}
