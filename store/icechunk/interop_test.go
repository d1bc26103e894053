package icechunk_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/store/internal/arraytest"
	"github.com/gozarr/gozarr/store/virtual"
	"github.com/gozarr/gozarr/zarr"
)

// refJS returns the directory of the official core's JS install
// (ICECHUNK_JS, set by .ci/run after ../shared/tools/icechunk/setup.sh), or
// skips the test.
func refJS(t *testing.T) string {
	t.Helper()
	d := os.Getenv("ICECHUNK_JS")
	if d == "" {
		t.Skip("ICECHUNK_JS is not set: install the official Icechunk core with ../shared/tools/icechunk/setup.sh DIR and set ICECHUNK_JS=DIR")
	}
	if _, err := os.Stat(filepath.Join(d, "node_modules", "@earthmover", "icechunk")); err != nil {
		t.Skipf("ICECHUNK_JS=%s holds no @earthmover/icechunk: %v", d, err)
	}
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed")
	}
	return d
}

// coreView is what read_repo.mjs reports.
type coreView struct {
	SpecVersion int                `json:"spec_version"`
	Branches    map[string]string  `json:"branches"`
	Tags        map[string]string  `json:"tags"`
	Ancestry    []refSnapshotInfo  `json:"ancestry"`
	Keys        map[string]*string `json:"keys"`
	Diff        *struct {
		NewArrays     []string `json:"newArrays"`
		UpdatedArrays []string `json:"updatedArrays"`
		DeletedArrays []string `json:"deletedArrays"`
		UpdatedChunks any      `json:"updatedChunks"`
	} `json:"diff"`
}

// readWithCore runs the official core on the repository at dir.
func readWithCore(t *testing.T, dir, ref string) coreView {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	var v coreView
	runCore(t, &v, "read_repo.mjs", abs, ref)
	return v
}

// runCore runs the script name of testdata/icechunk with args in the
// official core's install and decodes its JSON output into v.
func runCore(t *testing.T, v any, name string, args ...string) {
	t.Helper()
	js := refJS(t)
	script := filepath.Join(js, "gozarr_"+name)
	src, err := os.ReadFile(filepath.Join(fixtures, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(script, src, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", append([]string{"--no-warnings", script}, args...)...)
	cmd.Dir = js
	out, err := cmd.Output()
	if err != nil {
		msg := ""
		if ee, ok := err.(*exec.ExitError); ok {
			msg = string(ee.Stderr)
		}
		t.Fatalf("the official core: %s %q: %v\n%s", name, args, err, msg)
	}
	if err := json.Unmarshal(out, v); err != nil {
		t.Fatalf("%s: %v: %s", name, err, out)
	}
}

// checkAgainstCore compares what gozarr sees at ref with the core's view:
// branches, tags, ancestry and every key's bytes.
func checkAgainstCore(t *testing.T, dir, ref string) coreView {
	t.Helper()
	ctx := context.Background()
	core := readWithCore(t, dir, ref)
	r := openRepo(t, dir)
	checkRefs(t, r, core.Branches, core.Tags)
	id, anc := history(t, r, ref)
	if len(anc) != len(core.Ancestry) {
		t.Fatalf("%d ancestors, the core sees %d", len(anc), len(core.Ancestry))
	}
	for i, a := range anc {
		c := core.Ancestry[i]
		if a.ID.String() != c.ID || a.Message != c.Message {
			t.Errorf("ancestor %d: %v %q, the core sees %v %q", i, a.ID, a.Message, c.ID, c.Message)
		}
		gm, _ := json.Marshal(a.Metadata)
		cm, _ := json.Marshal(c.Metadata)
		if string(gm) != string(cm) {
			t.Errorf("ancestor %d metadata %s, the core sees %s", i, gm, cm)
		}
	}
	snap := checkout(t, r, id)
	keys := arraytest.Keys(t, snap, "")
	if len(keys) != len(core.Keys) {
		t.Errorf("%d keys, the core lists %d", len(keys), len(core.Keys))
	}
	for _, k := range keys {
		want, ok := core.Keys[k]
		if !ok || want == nil {
			t.Errorf("key %s: the core does not have it", k)
			continue
		}
		got, err := snap.Get(ctx, k, store.Full())
		if err != nil {
			t.Errorf("%s: %v", k, err)
			continue
		}
		if base64.StdEncoding.EncodeToString(got) != *want {
			t.Errorf("%s: gozarr and the core read different bytes", k)
		}
	}
	return core
}

// TestCoreReadsFixtures: the baseline, on what the core itself wrote.
func TestCoreReadsFixtures(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: node runs take seconds each")
	}
	checkAgainstCore(t, filepath.Join(fixtures, "spec1"), "dev")
	checkAgainstCore(t, filepath.Join(fixtures, "spec2"), "v1")
}

// TestCoreReadsGozarr: a commit gozarr writes (a new sharded array, a
// new plain one, a rewritten chunk, a deleted chunk, split manifests,
// native and inline chunks), tags and branches it makes, as the core sees
// them.
func TestCoreReadsGozarr(t *testing.T) {
	refJS(t)
	forSpecs(t, coreReadsGozarr)
}

func coreReadsGozarr(t *testing.T, spec string) {
	ctx := context.Background()
	dir, r := fixtureCopy(t, spec)
	s := session(t, r, "main", icechunk.WithManifestSplit(2), icechunk.WithInlineThreshold(40))
	writeSome(t, s)
	id, err := s.Commit(ctx, "gozarr: new arrays", map[string]any{"author": "gozarr", "run": 25.0, "tags": []any{"a", true}})
	if err != nil {
		t.Fatal(err)
	}
	if err := r.CreateTag(ctx, "gozarr-tag", id); err != nil {
		t.Fatal(err)
	}
	if err := r.CreateBranch(ctx, "gozarr-branch", id); err != nil {
		t.Fatal(err)
	}
	if err := r.DeleteTag(ctx, "v3"); err != nil {
		t.Fatal(err)
	}
	core := checkAgainstCore(t, dir, "main")
	if want := map[string]int{"spec1": 1, "spec2": 2}[spec]; core.SpecVersion != want {
		t.Errorf("the core sees spec version %d, want %d", core.SpecVersion, want)
	}
	if core.Ancestry[0].ID != id.String() {
		t.Errorf("the core sees main at %s, gozarr committed %v", core.Ancestry[0].ID, id)
	}
	// the core's diff, from gozarr's transaction log: two new arrays, the
	// chunks of i4 (1, 1) and f8 (2) changed
	if core.Diff == nil || !slices.Equal(core.Diff.NewArrays, []string{"/grid/new", "/sharded2"}) || len(core.Diff.UpdatedArrays) != 0 {
		t.Errorf("the core's diff of gozarr's commit: %+v", core.Diff)
	} else {
		// and gozarr's own Diff of the same two snapshots agrees with it
		gd, err := r.Diff(ctx, anc1(t, r, id), id)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(gd.NewArrays, core.Diff.NewArrays) || len(gd.UpdatedArrays) != 0 {
			t.Errorf("gozarr's diff %+v, the core's %+v", gd, core.Diff)
		}
		var coreChunks map[string][][]uint32
		b, _ := json.Marshal(core.Diff.UpdatedChunks)
		if err := json.Unmarshal(b, &coreChunks); err != nil {
			t.Fatalf("the core's updated chunks %s: %v", b, err)
		}
		for p, cs := range coreChunks {
			slices.SortFunc(cs, slices.Compare)
			if g := gd.UpdatedChunks[p]; !slices.EqualFunc(g, cs, slices.Equal) {
				t.Errorf("chunks changed in %s: gozarr %v, the core %v", p, g, cs)
			}
		}
		if len(coreChunks) != len(gd.UpdatedChunks) {
			t.Errorf("arrays with changed chunks: gozarr %v, the core %v", gd.UpdatedChunks, coreChunks)
		}
		uc, _ := json.Marshal(core.Diff.UpdatedChunks)
		for _, want := range []string{`"/i4":[[1,1]]`, `"/f8":[[2]]`} {
			if !strings.Contains(string(uc), want) {
				t.Errorf("the core's diff: updated chunks %s, want %s in it", uc, want)
			}
		}
	}
}

// anc1 returns the parent of snapshot id.
func anc1(t *testing.T, r *icechunk.Repository, id icechunk.ID) icechunk.ID {
	t.Helper()
	anc, err := r.Ancestry(context.Background(), id)
	if err != nil || len(anc) < 2 {
		t.Fatalf("ancestry of %v: %v", id, err)
	}
	return anc[1].ID
}

// writeSome writes through zarr: a sharded array, a plain one, a chunk of
// i4 and a deleted chunk of f8.
func writeSome(t *testing.T, s *icechunk.Session) {
	t.Helper()
	ctx := context.Background()
	data := arraytest.Ramp(4*120, 13)
	for i := range data {
		data[i] += byte(i / 7)
	}
	arraytest.Write(t, arraytest.Create(t, s, "sharded2", []int{12, 10}, dtype.TypeInt32, []int{2, 5}, zarr.Shards(4, 5)), data)
	arraytest.Write(t, arraytest.Create(t, s, "grid/new", []int{7}, dtype.TypeUint8, []int{3}), []byte{1, 2, 3, 4, 5, 6, 7})
	arraytest.Write(t, arraytest.Open(t, s, "i4"), make([]byte, 4*20), nd.Range(4, 8), nd.Range(5, 10))
	if err := s.Delete(ctx, "f8/c/2"); err != nil {
		t.Fatal(err)
	}
}

// TestCoreReadsCreated: a repository gozarr creates, with a commit, as the
// core sees it.
func TestCoreReadsCreated(t *testing.T) {
	refJS(t)
	for _, spec := range []int{1, 2} {
		t.Run(fmt.Sprint("spec", spec), func(t *testing.T) { coreReadsCreated(t, spec) })
	}
}

// writeRectilinear writes a float64 array "rect" of shape 10×12 with a
// rectilinear chunk grid (edges 3, 3, 4 and 4, 4, 4, as Icechunk's guide
// has it) holding 0..119, and returns its bytes.
func writeRectilinear(t *testing.T, s *icechunk.Session) []byte {
	t.Helper()
	a := arraytest.Create(t, s, "rect", []int{10, 12}, dtype.TypeFloat64, nil, zarr.RectilinearChunks([]int{3, 3, 4}, []int{4, 4, 4}))
	vals := make([]byte, 8*120)
	for i := range 120 {
		binary.LittleEndian.PutUint64(vals[8*i:], math.Float64bits(float64(i)))
	}
	arraytest.Write(t, a, vals)
	return vals
}

// checkRectilinear reads "rect" back from main: its values, and the
// snapshot's record of it (3 chunks along each dimension).
func checkRectilinear(t *testing.T, r *icechunk.Repository, vals []byte) {
	t.Helper()
	ctx := context.Background()
	snap := checkoutRef(t, r, "main")
	a := arraytest.Open(t, snap, "rect")
	got, _, err := a.ReadBytes(ctx)
	if err != nil || !bytes.Equal(got, vals) {
		t.Errorf("the rectilinear array reads %v (equal %t)", err, bytes.Equal(got, vals))
	}
	b, _, err := a.ReadBytes(ctx, nd.Range(2, 4), nd.Range(7, 9)) // across chunk edges
	if err != nil || len(b) != 32 || math.Float64frombits(binary.LittleEndian.Uint64(b[8:])) != 32 {
		t.Errorf("[2:4, 7:9] of the rectilinear array: %v %v", b, err)
	}
	for _, n := range snap.Nodes() {
		if n.Path == "/rect" && (len(n.Shape) != 2 || n.Shape[0] != 10 || n.Shape[1] != 12) {
			t.Errorf("the snapshot records /rect as %+v", n)
		}
	}
	if keys := len(arraytest.Keys(t, snap, "rect/c/")); keys != 9 {
		t.Errorf("the rectilinear array has %d chunk keys, want 9", keys)
	}
}

func coreReadsCreated(t *testing.T, spec int) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	r := create(t, st, icechunk.WithSpecVersion(spec))
	if r.SpecVersion() != spec {
		t.Errorf("created spec %d, want %d", r.SpecVersion(), spec)
	}
	for _, again := range []int{1, 2} {
		if _, err := icechunk.Create(ctx, st, icechunk.WithSpecVersion(again)); !errors.Is(err, icechunk.ErrConflict) {
			t.Errorf("creating twice (spec %d over %d): %v", again, spec, err)
		}
	}
	s := session(t, r, "main")
	if _, err := zarr.CreateGroup(ctx, s, "", map[string]any{"made": "by gozarr"}); err != nil {
		t.Fatal(err)
	}
	writeSomeNew(t, s)
	rect := writeRectilinear(t, s)
	commit(t, s, "first")
	core := checkAgainstCore(t, dir, "main") // (the rectilinear array's keys too)
	checkRectilinear(t, openRepo(t, dir), rect)
	if core.SpecVersion != spec {
		t.Errorf("the core sees spec version %d, want %d", core.SpecVersion, spec)
	}
	if len(core.Ancestry) != 2 || core.Ancestry[1].ID != "1CECHNKREP0F1RSTCMT0" {
		t.Errorf("the core's ancestry of a created repository: %+v", core.Ancestry)
	}
}

// writeSomeNew writes a sharded array into an empty repository.
func writeSomeNew(t *testing.T, s *icechunk.Session) {
	arraytest.Write(t, arraytest.Create(t, s, "x", []int{8, 6}, dtype.TypeFloat64, []int{2, 3}, zarr.Shards(4, 6)), arraytest.Ramp(8*48, 3))
}

// TestRectilinearSession: an array with a rectilinear chunk grid is
// written in a session and read back from the commit, spec 1 and 2 (the
// core reads it too: TestCoreReadsCreated).
func TestRectilinearSession(t *testing.T) {
	for _, spec := range []int{1, 2} {
		dir := t.TempDir()
		st, err := fs.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		s := session(t, create(t, st, icechunk.WithSpecVersion(spec)), "main")
		vals := writeRectilinear(t, s)
		commit(t, s, "rect")
		checkRectilinear(t, openRepo(t, dir), vals)
	}
}

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
		s, a := newArraySession(t, st, "v", dtype.TypeInt32, []int{20}, []int{4}, icechunk.WithSpecVersion(spec),
			icechunk.WithConfigContainers(icechunk.Container{Name: "web", URLPrefix: prefix},
				// (containers the core does not use here, to show it reads their configuration)
				icechunk.Container{URLPrefix: "s3://gozarr-virtual/p/", S3Region: "us-east-1", S3Endpoint: "http://127.0.0.1:1", S3Anonymous: true, S3AllowHTTP: true, S3PathStyle: true}))
		arraytest.Write(t, a, native, nd.Range(16, 20))
		commitVirtual(t, s, map[string]virtual.Ref{
			"v/c/0": {URL: prefix + "blob.bin", Offset: 0, Length: 16},
			"v/c/1": {URL: prefix + "blob.bin", Offset: 16, Length: 16, Checksum: virtual.Checksum{ETag: `"v1"`}},
			"v/c/2": {URL: "vcc://web/blob.bin", Offset: 32, Length: 16, Checksum: virtual.Checksum{LastModified: when}},
			"v/c/3": {URL: prefix + "blob.bin", Offset: 48, Length: 16, Checksum: virtual.Checksum{ETag: `"stale"`}},
		})
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
		snap := checkoutRef(t, r2, "main")
		if snap.ID().String() != fixed.Commit {
			t.Fatalf("spec %d: main is %v, the core committed %s", spec, snap.ID(), fixed.Commit)
		}
		ga := arraytest.Open(t, snap, "v")
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
