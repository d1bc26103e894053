package main

import (
	"context"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/icechunk"
	"github.com/gozarr/gozarr/zarr"
)

//go:embed commit.mjs
var commitScript []byte

// commitTimes is what one side of the commit benchmark took.
type commitTimes struct {
	Set    float64 `json:"set_ms"`
	Commit float64 `json:"commit_ms"`
}

// gozarrCommit creates a repository of spec version spec in a new
// directory, sets n chunks of size bytes (the bytes commit.mjs writes) and
// commits them, timing the sets and the commit.
func gozarrCommit(ctx context.Context, dir string, n, size, spec int) (commitTimes, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return commitTimes{}, err
	}
	st, err := fs.New(dir)
	if err != nil {
		return commitTimes{}, err
	}
	r, err := icechunk.Create(ctx, st, icechunk.WithSpecVersion(spec))
	if err != nil {
		return commitTimes{}, err
	}
	s, err := r.Session(ctx, "main")
	if err != nil {
		return commitTimes{}, err
	}
	meta, err := zarr.NewArrayMetadata([]int{n, size}, dtype.TypeUint8, []int{1, size})
	if err != nil {
		return commitTimes{}, err
	}
	if _, err := zarr.CreateArray(ctx, s, "a", meta); err != nil {
		return commitTimes{}, err
	}
	t0 := time.Now()
	b := make([]byte, size)
	for i := range n {
		for j := range b {
			b[j] = byte(i*31 + j*7)
		}
		if err := s.Set(ctx, fmt.Sprintf("a/c/%d/0", i), b); err != nil {
			return commitTimes{}, err
		}
	}
	t1 := time.Now()
	if _, err := s.Commit(ctx, fmt.Sprintf("%d chunks", n), nil); err != nil {
		return commitTimes{}, err
	}
	return commitTimes{Set: ms(t1.Sub(t0)), Commit: ms(time.Since(t1))}, nil
}

func median(v []float64) float64 {
	slices.Sort(v)
	return v[len(v)/2]
}

// benchCommit times a commit of n chunks of size bytes by gozarr and by
// the official core (node, in js; skipped when js is ""), each into a new
// repository on the local filesystem, reps times each, interleaved; it
// prints the medians and their ratio.
func benchCommit(ctx context.Context, js string, n, size, spec, reps int) error {
	tmp, err := os.MkdirTemp("", "icechunkbench-commit")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	var script string
	if js != "" {
		script = filepath.Join(js, "gozarr_bench_commit.mjs")
		if err := os.WriteFile(script, commitScript, 0o644); err != nil {
			return err
		}
	}
	var gz, core []commitTimes
	for i := range reps {
		g, err := gozarrCommit(ctx, filepath.Join(tmp, fmt.Sprintf("gozarr%d", i)), n, size, spec)
		if err != nil {
			return err
		}
		gz = append(gz, g)
		if js == "" {
			continue
		}
		cmd := exec.CommandContext(ctx, "node", "--no-warnings", script, filepath.Join(tmp, fmt.Sprintf("core%d", i)), fmt.Sprint(n), fmt.Sprint(size), fmt.Sprint(spec))
		cmd.Dir = js
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("the official core's commit: %w", err)
		}
		var c commitTimes
		if err := json.Unmarshal(out, &c); err != nil {
			return fmt.Errorf("the official core's commit printed %q: %w", out, err)
		}
		core = append(core, c)
	}
	med := func(ts []commitTimes, f func(commitTimes) float64) float64 {
		v := make([]float64, len(ts))
		for i, t := range ts {
			v[i] = f(t)
		}
		return median(v)
	}
	set := func(t commitTimes) float64 { return t.Set }
	commit := func(t commitTimes) float64 { return t.Commit }
	fmt.Printf("commit: %d chunks of %d B (native: chunks/ files) into a new spec %d repository on the local filesystem, median of %d:\n", n, size, spec, reps)
	fmt.Printf("  gozarr     sets %8.1f ms   commit %8.1f ms\n", med(gz, set), med(gz, commit))
	if js == "" {
		fmt.Println("  (the official core not run: give -js DIR or set ICECHUNK_JS, see ../shared/tools/icechunk/setup.sh)")
		return nil
	}
	fmt.Printf("  core       sets %8.1f ms   commit %8.1f ms   (wasm, storage callbacks in node)\n", med(core, set), med(core, commit))
	fmt.Printf("  ratio core/gozarr: sets %.2f, commit %.2f, both %.2f\n", med(core, set)/med(gz, set), med(core, commit)/med(gz, commit),
		(med(core, set)+med(core, commit))/(med(gz, set)+med(gz, commit)))
	return nil
}
