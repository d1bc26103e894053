package icechunk_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/store/internal/arraytest"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

func TestSessionRoundTrip(t *testing.T) { forSpecs(t, sessionRoundTrip) }

func sessionRoundTrip(t *testing.T, spec string) {
	ctx := context.Background()
	dir := copyDir(t, filepath.Join(fixtures, spec))
	st, err := fs.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := session(t, open(t, st), "main", icechunk.WithManifestSplit(3), icechunk.WithInlineThreshold(16))
	data := arraytest.Ramp(4*70, 7)
	arraytest.Write(t, arraytest.Create(t, s, "grid/new", []int{10, 7}, dtype.TypeInt32, []int{3, 2}), data)
	id, err := s.Commit(ctx, "gozarr writes", map[string]any{"author": "gozarr", "n": 3.0})
	if err != nil {
		t.Fatal(err)
	}
	r2 := open(t, st)
	snap := checkoutRef(t, r2, "main")
	if snap.ID() != id {
		t.Fatalf("main at %v, committed %v", snap.ID(), id)
	}
	if got := arraytest.Read(t, snap, "grid/new"); string(got) != string(data) {
		t.Errorf("read back differs")
	}
	anc, err := r2.Ancestry(ctx, id)
	if err != nil || len(anc) != 5 || anc[0].Message != "gozarr writes" || anc[0].Metadata["author"] != "gozarr" {
		t.Errorf("ancestry %+v %v", anc, err)
	}
	if err := r2.CreateTag(ctx, "gz", id); err != nil {
		t.Fatal(err)
	}
	if err := r2.CreateTag(ctx, "gone", id); !errors.Is(err, icechunk.ErrConflict) {
		t.Errorf("recreating a deleted tag: %v", err)
	}
	if err := r2.CreateBranch(ctx, "gzb", id); err != nil {
		t.Fatal(err)
	}
	if err := r2.DeleteBranch(ctx, "dev"); err != nil {
		t.Fatal(err)
	}
	if anc[0].Metadata["n"] != 3.0 && anc[0].Metadata["n"] != int64(3) && anc[0].Metadata["n"] != uint64(3) {
		t.Errorf("metadata n = %#v, want 3", anc[0].Metadata["n"])
	}
	// refs made once only; main stays; a deleted tag's name stays taken
	for what, err := range map[string]error{
		"tag twice":    r2.CreateTag(ctx, "gz", id),
		"branch twice": r2.CreateBranch(ctx, "gzb", id),
		"delete main":  r2.DeleteBranch(ctx, "main"),
	} {
		if !errors.Is(err, icechunk.ErrConflict) {
			t.Errorf("%s: %v, want ErrConflict", what, err)
		}
	}
	if err := r2.DeleteTag(ctx, "gz"); err != nil {
		t.Fatal(err)
	}
	if err := r2.CreateTag(ctx, "gz", id); !errors.Is(err, icechunk.ErrConflict) {
		t.Errorf("recreating a tag deleted by gozarr: %v", err)
	}
	if err := r2.DeleteTag(ctx, "gz"); !errors.Is(err, icechunk.ErrRefNotFound) {
		t.Errorf("deleting a deleted tag: %v", err)
	}
	r3 := open(t, st)
	br, tags := refs(t, r3)
	if _, ok := br["dev"]; ok || br["gzb"] != id || br["main"] != id {
		t.Errorf("branches after the edits: %v", br)
	}
	if _, ok := tags["gz"]; ok {
		t.Errorf("tags after deleting gz: %v", tags)
	}
	if _, err := r3.Resolve(ctx, "gz"); !errors.Is(err, icechunk.ErrRefNotFound) {
		t.Errorf("resolving the deleted tag gz: %v", err)
	}
}

// TestConflict: two sessions from one base; the second to commit a chunk
// the first wrote gets ErrConflict naming the array; one writing another
// chunk is rebased and keeps both.
func TestConflict(t *testing.T) { forSpecs(t, conflict) }

func conflict(t *testing.T, spec string) {
	ctx := context.Background()
	dir, r := fixtureCopy(t, spec)
	sessions := make([]*icechunk.Session, 3)
	for i := range sessions {
		sessions[i] = session(t, r, "main")
	}
	write := func(s *icechunk.Session, row int, v byte) {
		arraytest.Write(t, arraytest.Open(t, s, "i4"), bytes.Repeat([]byte{v}, 4*5), nd.Range(row, row+1), nd.Range(0, 5))
	}
	write(sessions[0], 0, 1)
	write(sessions[1], 1, 2) // the same chunk (0, 0) of i4
	write(sessions[2], 9, 3) // chunk (2, 0)
	first := commit(t, sessions[0], "first")
	_, err := sessions[1].Commit(ctx, "second", nil)
	if !errors.Is(err, icechunk.ErrConflict) || !strings.Contains(err.Error(), "/i4 chunk [0 0]") {
		t.Errorf("conflicting commit: %v", err)
	}
	third, err := sessions[2].Commit(ctx, "third", nil)
	if err != nil {
		t.Fatalf("non-conflicting commit: %v", err)
	}
	r2 := openRepo(t, dir)
	anc, err := r2.Ancestry(ctx, third)
	if err != nil || anc[1].ID != first {
		t.Fatalf("third's parent %v, want %v (%v)", anc[1].ID, first, err)
	}
	got := arraytest.Read(t, checkoutRef(t, r2, "main"), "i4", nd.Range(0, 10), nd.Range(0, 1))
	if got[0] != 1 || got[4*9] != 3 {
		t.Errorf("after the rebase i4[0,0]=%d i4[9,0]=%d, want 1 and 3", got[0], got[4*9])
	}
}

// TestConcurrentWriters: two processes commit to main 20 rounds each, one
// chunk each round: every commit ends on the branch (rebased, never lost),
// on spec 1 (ref.json If-Match) and spec 2 (the repo object).
func TestConcurrentWriters(t *testing.T) {
	if w := os.Getenv("ICECHUNK_TEST_WORKER"); w != "" {
		concurrentWorker(t, w)
		return
	}
	forSpecs(t, concurrentWriters)
}

func concurrentWriters(t *testing.T, spec string) {
	rounds := 20
	if testing.Short() {
		rounds = 5
	}
	dir, r := fixtureCopy(t, spec)
	s := session(t, r, "main")
	arraytest.Create(t, s, "conc", []int{2, 2 * rounds}, dtype.TypeUint8, []int{1, 1})
	commit(t, s, "conc")
	var wg sync.WaitGroup
	outs := make([]string, 2)
	errs := make([]error, 2)
	for p := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentWriters$", "-test.v")
			cmd.Env = append(os.Environ(), fmt.Sprintf("ICECHUNK_TEST_WORKER=%s,%d,%d", dir, p, rounds))
			out, err := cmd.CombinedOutput()
			outs[p], errs[p] = string(out), err
		}()
	}
	wg.Wait()
	var ids []string
	for p := range 2 {
		if errs[p] != nil {
			t.Fatalf("worker %d: %v\n%s", p, errs[p], outs[p])
		}
		for _, line := range strings.Split(outs[p], "\n") {
			if id, ok := strings.CutPrefix(strings.TrimSpace(line), "committed "); ok {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) != 2*rounds {
		t.Fatalf("%d commits reported, want %d", len(ids), 2*rounds)
	}
	r2 := openRepo(t, dir)
	head, anc := history(t, r2, "main")
	on := map[string]bool{}
	for _, a := range anc {
		on[a.ID.String()] = true
	}
	for _, id := range ids {
		if !on[id] {
			t.Errorf("commit %s is not on main", id)
		}
	}
	got := arraytest.Read(t, checkout(t, r2, head), "conc")
	for p := range 2 {
		for i := range rounds {
			if v := got[p*2*rounds+i]; v != byte(1+i) {
				t.Errorf("conc[%d, %d] = %d, want %d (a lost write)", p, i, v, 1+i)
			}
		}
	}
}

func concurrentWorker(t *testing.T, spec string) {
	parts := strings.Split(spec, ",")
	dir := parts[0]
	p, _ := strconv.Atoi(parts[1])
	rounds, _ := strconv.Atoi(parts[2])
	r := openRepo(t, dir)
	for i := range rounds {
		s := session(t, r, "main")
		arraytest.Write(t, arraytest.Open(t, s, "conc"), []byte{byte(1 + i)}, nd.Range(p, p+1), nd.Range(i, i+1))
		fmt.Println("committed", commit(t, s, fmt.Sprintf("worker %d round %d", p, i)))
	}
}

// TestKilledCommitter SIGKILLs a process committing in a loop at several
// moments: each time the repository opens, main names a snapshot that
// reads whole, and a new commit goes through.
func TestKilledCommitter(t *testing.T) {
	if os.Getenv("ICECHUNK_TEST_KILLED") != "" {
		killedWorker(t, os.Getenv("ICECHUNK_TEST_KILLED"))
		return
	}
	forSpecs(t, killedCommitter)
}

func killedCommitter(t *testing.T, spec string) {
	ctx := context.Background()
	dir, r := fixtureCopy(t, spec)
	s := session(t, r, "main")
	arraytest.Create(t, s, "crash", []int{64, 64}, dtype.TypeUint16, []int{4, 4})
	commit(t, s, "crash")
	kills := 6
	if testing.Short() {
		kills = 2
	}
	for k := range kills {
		cmd := exec.Command(os.Args[0], "-test.run=^TestKilledCommitter$")
		cmd.Env = append(os.Environ(), "ICECHUNK_TEST_KILLED="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		buf := make([]byte, 64)
		out.Read(buf) // the worker has started committing
		time.Sleep(time.Duration(20+37*k) * time.Millisecond)
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		r := openRepo(t, dir)
		snap, err := r.CheckoutRef(ctx, "main")
		if err != nil {
			t.Fatalf("after kill %d: %v", k, err)
		}
		a, err := zarr.OpenArray(ctx, snap, "crash")
		if err != nil {
			t.Fatalf("after kill %d: %v", k, err)
		}
		if _, _, err := a.ReadBytes(ctx); err != nil {
			t.Fatalf("after kill %d: %v", k, err)
		}
		s := session(t, r, "main")
		arraytest.Write(t, arraytest.Open(t, s, "crash"), []byte{1, 2}, nd.Range(0, 1), nd.Range(0, 1))
		if _, err := s.Commit(ctx, "after a kill", nil); err != nil {
			t.Fatalf("commit after kill %d: %v", k, err)
		}
	}
}

func killedWorker(t *testing.T, dir string) {
	r := openRepo(t, dir)
	os.Stdout.WriteString(strings.Repeat("x", 64))
	for i := 0; ; i++ {
		s := session(t, r, "main")
		v := arraytest.Ramp(2*16*64, 1)
		for j := range v {
			v[j] += byte(i)
		}
		row := (i % 4) * 16
		arraytest.Write(t, arraytest.Open(t, s, "crash"), v, nd.Range(row, row+16), nd.Range(0, 64))
		commit(t, s, "loop")
	}
}

// TestForkMerge: two sessions at one base write different chunks of i4
// (one native, one inline), export their refs; a third session at the
// base imports both and commits once: one new snapshot whose parent is the
// base, both writes in it, the rest of i4 as it was. Overlapping imports
// and a session that changed metadata are refused.
func TestForkMerge(t *testing.T) {
	ctx := context.Background()
	for _, spec := range []string{"spec1", "spec2"} {
		dir, r := fixtureCopy(t, spec)
		base := resolve(t, r, "main")
		before := readI4(t, r, base)
		var docs [][]byte
		for w, row := range []int{0, 9} {
			s, err := r.SessionAt(ctx, "main", base, icechunk.WithInlineThreshold(4096*w))
			if err != nil {
				t.Fatal(err)
			}
			arraytest.Write(t, arraytest.Open(t, s, "i4"), bytes.Repeat([]byte{byte(50 + w)}, 4*5), nd.Range(row, row+1), nd.Range(0, 5))
			doc, err := s.ExportChanges()
			if err != nil {
				t.Fatal(err)
			}
			docs = append(docs, doc)
		}
		m, err := r.SessionAt(ctx, "main", base)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range docs {
			if err := m.ImportChanges(d); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.ImportChanges(docs[0]); !errors.Is(err, icechunk.ErrConflict) {
			t.Errorf("%s: importing a chunk twice: %v, want ErrConflict", spec, err)
		}
		id, err := m.Commit(ctx, "merged", nil)
		if err != nil {
			t.Fatal(err)
		}
		r2 := openRepo(t, dir)
		anc, err := r2.Ancestry(ctx, id)
		if err != nil || anc[1].ID != base {
			t.Fatalf("%s: the merged commit's parent %v, want the base %v (%v)", spec, anc[1].ID, base, err)
		}
		after := readI4(t, r2, id)
		for i := range after {
			row, col := i/4/12, i/4%12
			want := before[i]
			if col < 5 && row == 0 {
				want = 50
			} else if col < 5 && row == 9 {
				want = 51
			}
			if after[i] != want {
				t.Fatalf("%s: i4 byte %d (%d, %d) = %d, want %d", spec, i, row, col, after[i], want)
			}
		}
		// a forked session that changes metadata cannot be exported
		s, err := r2.SessionAt(ctx, "main", id)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := zarr.CreateGroup(ctx, s, "newgroup", nil); err != nil {
			t.Fatal(err)
		}
		if _, err := s.ExportChanges(); !errors.Is(err, icechunk.ErrUnsupported) {
			t.Errorf("%s: exporting a metadata change: %v, want ErrUnsupported", spec, err)
		}
		// changes from another base are refused
		if err := s.ImportChanges(docs[1]); !errors.Is(err, icechunk.ErrConflict) {
			t.Errorf("%s: importing changes of another base: %v", spec, err)
		}
	}
}

func readI4(t *testing.T, r *icechunk.Repository, id icechunk.ID) []byte {
	t.Helper()
	return arraytest.Read(t, checkout(t, r, id), "i4")
}

// timedStore is a memory store that tells when each value was set (a
// test clock), as object stores' ReadCondition does.
type timedStore struct {
	*mem.Store
	mu    sync.Mutex
	now   time.Time
	times map[string]time.Time
}

func (s *timedStore) Set(ctx context.Context, key string, v []byte) error {
	s.mu.Lock()
	s.times[key] = s.now
	s.mu.Unlock()
	return s.Store.Set(ctx, key, v)
}

func (s *timedStore) ReadCondition(ctx context.Context, key string) (store.ReadCondition, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return store.ReadCondition{LastModified: s.times[key]}, nil
}

func (s *timedStore) at(t time.Time) { s.mu.Lock(); s.now = t; s.mu.Unlock() }

func (s *timedStore) chunkFiles(t *testing.T) int { return len(arraytest.Keys(t, s, "chunks/")) }

// TestCollectChunks: the chunks of a session never committed and of a
// deleted branch's commit are unreferenced; a dry run only reports them;
// Before keeps the newer ones (a session that may still commit); AnyAge
// deletes the rest; main reads whole afterwards.
func TestCollectChunks(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	ts := &timedStore{Store: mem.New(), now: t0, times: map[string]time.Time{}}
	r := create(t, ts)
	vals := make([]byte, 256)
	for i := range 64 {
		binary.LittleEndian.PutUint32(vals[4*i:], uint32(100+i))
	}
	write := func(branch string, data []byte, sel ...nd.Item) *icechunk.Session {
		s := session(t, r, branch, icechunk.WithInlineThreshold(0))
		a, err := zarr.OpenArray(ctx, s, "v")
		if err != nil {
			a = arraytest.Create(t, s, "v", []int{64}, dtype.TypeInt32, []int{4})
		}
		arraytest.Write(t, a, data, sel...)
		return s
	}
	commit(t, write("main", vals), "all")
	head := resolve(t, r, "main")
	ts.at(t0.Add(time.Hour)) // a branch's commit, then the branch deleted
	if err := r.CreateBranch(ctx, "dev", head); err != nil {
		t.Fatal(err)
	}
	commit(t, write("dev", bytes.Repeat([]byte{7}, 8*4), nd.Range(0, 8)), "dev")
	if err := r.DeleteBranch(ctx, "dev"); err != nil {
		t.Fatal(err)
	}
	ts.at(t0.Add(3 * time.Hour)) // a session that never commits
	write("main", bytes.Repeat([]byte{9}, 16*4), nd.Range(16, 32))
	if n := ts.chunkFiles(t); n != 16+2+4 {
		t.Fatalf("%d chunk files, want 22", n)
	}

	res, err := r.CollectChunks(ctx, icechunk.GCOptions{DryRun: true, AnyAge: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Referenced != 16 || len(res.Unreferenced) != 6 || res.Deleted != 0 || ts.chunkFiles(t) != 22 {
		t.Errorf("dry run: %+v, %d files; want 16 referenced, 6 unreferenced, none deleted", res, ts.chunkFiles(t))
	}
	for _, k := range res.Unreferenced {
		if !strings.HasPrefix(k, "chunks/") {
			t.Errorf("unreferenced %q", k)
		}
	}
	res, err = r.CollectChunks(ctx, icechunk.GCOptions{Before: t0.Add(2 * time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted != 2 || res.Kept != 4 || ts.chunkFiles(t) != 20 {
		t.Errorf("before the session began: %+v, %d files; want the branch's 2 deleted, the session's 4 kept", res, ts.chunkFiles(t))
	}
	res, err = r.CollectChunks(ctx, icechunk.GCOptions{AnyAge: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Deleted != 4 || res.Referenced != 16 || ts.chunkFiles(t) != 16 {
		t.Errorf("any age: %+v, %d files; want 4 deleted, 16 left", res, ts.chunkFiles(t))
	}
	got, _, err := openMainArray(t, ts, "v").ReadBytes(ctx)
	if err != nil || !bytes.Equal(got, vals) {
		t.Errorf("main after collecting: %v (equal %t)", err, bytes.Equal(got, vals))
	}
	// a store that cannot tell ages keeps everything unless AnyAge
	r2 := create(t, mem.New())
	s := session(t, r2, "main", icechunk.WithInlineThreshold(0))
	arraytest.Write(t, arraytest.Create(t, s, "v", []int{64}, dtype.TypeInt32, []int{4}), vals)
	if res, err := r2.CollectChunks(ctx, icechunk.GCOptions{Before: t0.Add(1000 * time.Hour)}); err != nil || res.Kept != 16 || res.Deleted != 0 {
		t.Errorf("no modification times: %+v %v, want 16 kept", res, err)
	}
}
