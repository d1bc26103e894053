package readmecheck

import (
	"context"
	"encoding/binary"
	"go/scanner"
	"go/token"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/loader"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// The README's Go snippets are fragments (free variables such as ctx,
// buf or a, no error checks between lines), so they cannot be compiled as
// they stand. Each one is copied into a function of snippet_code_test.go,
// between the lines that declare what it uses and check what it made, and
// TestReadmeSnippets runs those functions on the test data. This test
// checks that the copies are the README's text: every paragraph of a
// snippet (lines between blank lines) must appear in snippet_code_test.go
// as the same tokens, in order (comments, semicolons and layout aside, so
// gofmt may reformat the copy).

// goTokens returns the tokens of Go source src, comments and semicolons
// left out.
func goTokens(src string) []string {
	var s scanner.Scanner
	fset := token.NewFileSet()
	f := fset.AddFile("", -1, len(src))
	s.Init(f, []byte(src), nil, 0)
	var toks []string
	for {
		_, tok, lit := s.Scan()
		switch {
		case tok == token.EOF:
			return toks
		case tok == token.SEMICOLON, tok == token.COMMENT:
		case lit != "":
			toks = append(toks, lit)
		default:
			toks = append(toks, tok.String())
		}
	}
}

// paragraphs splits a snippet at blank lines.
func paragraphs(text string) []string {
	var out []string
	for _, p := range strings.Split(text, "\n\n") {
		if strings.TrimSpace(p) != "" {
			out = append(out, p)
		}
	}
	return out
}

// indexFrom returns the index of sub in toks at or after from, or -1.
func indexFrom(toks, sub []string, from int) int {
next:
	for i := from; i+len(sub) <= len(toks); i++ {
		for j := range sub {
			if toks[i+j] != sub[j] {
				continue next
			}
		}
		return i
	}
	return -1
}

func TestReadmeSnippetsCopied(t *testing.T) {
	_, blocks := allUnits(t, repoRoot(t))
	code, err := os.ReadFile("snippet_code_test.go")
	if err != nil {
		t.Fatal(err)
	}
	toks := goTokens(string(code))
	if len(blocks) < 6 {
		t.Fatalf("only %d Go snippets in the READMEs", len(blocks))
	}
	for _, b := range blocks {
		at := 0
		for _, p := range paragraphs(b.text) {
			i := indexFrom(toks, goTokens(p), at)
			if i < 0 {
				t.Errorf("%s:%d: this part of a Go snippet is not in internal/readmecheck/snippet_code_test.go (after the snippet's earlier parts); copy the snippet there, into the function TestReadmeSnippets runs for it:\n%s", b.file, b.line, p)
				break
			}
			at = i + len(goTokens(p))
		}
	}
}

// TestReadmeSnippets runs the README's Go snippets (their copies in
// snippet_code_test.go) on copies of the test data.
func TestReadmeSnippets(t *testing.T) {
	ctx := context.Background()
	root := repoRoot(t)
	ref := func(p string) string { return filepath.Join(root, "testdata", p) }
	open := func(t *testing.T, dir, name string) *zarr.Array {
		t.Helper()
		st, err := fs.New(dir)
		must(t, err)
		a, err := zarr.OpenArray(ctx, st, name)
		must(t, err)
		return a
	}

	t.Run("Go", func(t *testing.T) {
		dir := t.TempDir()
		t.Chdir(dir)
		must(t, os.Mkdir("data", 0o755))
		st, err := fs.New("data")
		must(t, err)
		_, err = zarr.CreateGroup(ctx, st, "", nil)
		must(t, err)
		copyDir(t, ref("refdata/v3_ndim3.zarr"), filepath.Join("data", "temperature"))
		snippetGo(t, ctx, make([]float32, 14*15*7))
	})

	t.Run("Strings", func(t *testing.T) {
		dir := t.TempDir()
		copyDir(t, ref("vlen/v3_string_fill.zarr"), filepath.Join(dir, "s"))
		copyDir(t, ref("vlen/v3_bytes.zarr"), filepath.Join(dir, "b"))
		zs, err := codecs.NewZstd(1, false)
		must(t, err)
		snippetStrings(t, ctx, open(t, dir, "s"), open(t, dir, "b"), 1000, zs)
	})

	t.Run("Objects", func(t *testing.T) {
		dir := t.TempDir()
		copyDir(t, ref("objects/msgpack2_mixed.zarr"), filepath.Join(dir, "m"))
		copyDir(t, ref("objects/vlen_array_i4.zarr"), filepath.Join(dir, "r"))
		snippetObjects(t, ctx, open(t, dir, "m"), open(t, dir, "r"))
	})

	t.Run("Selections", func(t *testing.T) {
		dir := t.TempDir()
		copyDir(t, ref("refdata/v3_dtype_float32.zarr"), filepath.Join(dir, "a"))
		keep := make([]bool, 23)
		for j := range keep {
			keep[j] = j%3 == 0
		}
		is, js := []int{0, 5, 27}, []int{1, 22, 0}
		mask := make([]bool, 28*23)
		for k := range is {
			mask[is[k]*23+js[k]] = true
		}
		batch := nd.Contiguous(make([]byte, 4*5*30), []int{5, 30}, 4)
		snippetSelections(t, ctx, open(t, dir, "a"), keep, is, js, mask,
			batch, []int{1, 3}, []int{2, 23}, []int{2, 1}, 4, 26)
	})

	t.Run("Caches", func(t *testing.T) {
		dir := t.TempDir()
		st, err := fs.New(dir)
		must(t, err)
		_, err = zarr.CreateGroup(ctx, st, "", nil)
		must(t, err)
		copyDir(t, ref("refdata/v3_ndim3.zarr"), filepath.Join(dir, "temperature"))
		copyDir(t, ref("refdata/v3_dtype_float32.zarr"), filepath.Join(dir, "pressure"))
		g, err := zarr.OpenGroup(ctx, st, "")
		must(t, err)
		want, _ := float32s(t, "testdata/refdata/v3_ndim3.npy")
		n := 0
		process := func(start, shape []int, data []byte) {
			for k := 0; k+4 <= len(data); k += 4 {
				// Blocks are whole rows along axis 0: C order continues.
				if v := math.Float32frombits(binary.LittleEndian.Uint32(data[k:])); v != want[n] {
					t.Fatalf("block at %v: element %d = %v, want %v", start, n, v, want[n])
				}
				n++
			}
		}
		must(t, snippetCaches(ctx, g, st, process))
		if n != len(want) {
			t.Errorf("the blocks held %d elements, want %d", n, len(want))
		}
	})

	t.Run("Loader", func(t *testing.T) {
		st, err := fs.New(t.TempDir())
		must(t, err)
		const rows, cols = 1024, 64
		mx, err := zarr.NewArrayMetadata([]int{rows, cols}, dtype.TypeFloat32, []int{64, cols})
		must(t, err)
		x, err := zarr.CreateArray(ctx, st, "x", mx)
		must(t, err)
		ml, err := zarr.NewArrayMetadata([]int{rows}, dtype.TypeInt32, []int{64})
		must(t, err)
		labels, err := zarr.CreateArray(ctx, st, "labels", ml)
		must(t, err)
		xv, lv := make([]float32, rows*cols), make([]int32, rows)
		for i := range lv {
			lv[i] = int32(i)
			for j := range cols {
				xv[i*cols+j] = float32(i)
			}
		}
		must(t, zarr.Write(ctx, x, xv))
		must(t, zarr.Write(ctx, labels, lv))
		batches := 0
		train := func(xb, yb, past []byte) {
			batches++
			for s := 0; s < len(yb)/4; s++ {
				y := int32(binary.LittleEndian.Uint32(yb[4*s:]))
				if v := math.Float32frombits(binary.LittleEndian.Uint32(xb[4*s*cols:])); v != float32(y) {
					t.Fatalf("sample %d: x row %v beside label %d", s, v, y)
				}
				for w := range 3 { // past: rows y-2, y-1, y
					if v := math.Float32frombits(binary.LittleEndian.Uint32(past[4*(s*3+w)*cols:])); v != float32(int(y)-2+w) {
						t.Fatalf("sample %d (label %d): window row %d is row %v", s, y, w, v)
					}
				}
			}
		}
		end, err := snippetLoader(ctx, x, labels, 0, 1, loader.State{}, train)
		must(t, err)
		// 1022 samples have two rows before them: 3 full batches of 256 an epoch.
		if batches != 30 {
			t.Errorf("%d batches in 10 epochs, want 30 (end state %+v)", batches, end)
		}
	})
}
