package icechunk_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/store/internal/arraytest"
)

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
	ctx := context.Background()
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
	head, err := r2.Resolve(ctx, "main")
	if err != nil {
		t.Fatal(err)
	}
	anc, err := r2.Ancestry(ctx, head)
	if err != nil {
		t.Fatal(err)
	}
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
