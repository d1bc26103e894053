package zip_test

import (
	"bytes"
	"context"
	"iter"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/internal/refdata"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/zip"
	"github.com/gozarr/gozarr/zarr"
)

// pythonTool returns the zarr-python chroot runner, or skips t.
func pythonTool(t *testing.T) string {
	t.Helper()
	return refdata.PythonTool(t)
}

// runPython runs a script of testdata with the chroot's python, the
// module root and dirs visible inside.
func runPython(t *testing.T, tool string, dirs []string, args ...string) string {
	t.Helper()
	root, err := filepath.Abs(filepath.Join(refdata.Dir(), "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(tool, args...)
	cmd.Dir = root
	cmd.Env = append(os.Environ(), "REFPY_BIND="+strings.Join(append([]string{root, "/tmp"}, dirs...), ":"))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", tool, strings.Join(args, " "), err, out)
	}
	return string(out)
}

// checkCorpus reads every reference case whose array the archive holds
// (all of them unless partial) and compares it, bit for bit, with the same
// array read from the corpus directory, whose values the zarr package's
// conformance test compares with the .npy files. It also compares the
// values with the .npy bytes directly, and logs how many are bitwise
// equal (NaN payloads aside, all of them).
func checkCorpus(t *testing.T, zr *zip.Reader, partial bool) {
	t.Helper()
	ctx := context.Background()
	dir, err := fs.New(refdata.Dir(), fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	read, exact := 0, 0
	for _, c := range refdata.Cases(t) {
		meta := c.Path + "/zarr.json"
		if c.ZarrFormat == 2 {
			meta = c.Path + "/.zarray"
		}
		if _, err := zr.Size(ctx, strings.TrimPrefix(meta, "/")); err != nil {
			if partial {
				continue
			}
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		a, err := zarr.OpenArray(ctx, zr, c.Path)
		if err != nil {
			t.Errorf("%s: open: %v", c.Name, err)
			continue
		}
		got, _, err := a.ReadBytes(ctx)
		if err != nil {
			t.Errorf("%s: read: %v", c.Name, err)
			continue
		}
		b, err := zarr.OpenArray(ctx, dir, c.Path)
		if err != nil {
			t.Fatal(err)
		}
		want, _, err := b.ReadBytes(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: values read from the archive differ from the directory's", c.Name)
			continue
		}
		if bytes.Equal(got, c.ExpectedArray(t).Data) {
			exact++
		}
		read++
	}
	if read == 0 || (!partial && read != len(refdata.Cases(t))) {
		t.Errorf("read %d cases", read)
	}
	for _, g := range refdata.Groups(t) {
		if _, err := zr.Size(ctx, g.Path+"/zarr.json"); err != nil && g.ZarrFormat == 3 {
			if !partial {
				t.Errorf("group %s: %v", g.Name, err)
			}
			continue
		}
		if _, err := zarr.OpenGroup(ctx, zr, g.Path); err != nil {
			t.Errorf("group %s: %v", g.Name, err)
		}
	}
	t.Logf("%d reference arrays read from the archive equal to the directory's (%d also bitwise equal to their .npy)", read, exact)
}

func openFile(t *testing.T, path string) *zip.Reader {
	t.Helper()
	src, err := fs.New(filepath.Dir(path), fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.Open(context.Background(), src, filepath.Base(path))
	if err != nil {
		t.Fatal(err)
	}
	return zr
}

// TestCorpusPython reads the reference arrays out of archives made by
// Python's zipfile (testdata/make_zips.py, checked in for a subset of the
// corpus: deflate entries; stored entries with ZIP64 local headers, and
// names appended twice more, the last entry restoring the value).
func TestCorpusPython(t *testing.T) {
	for _, name := range []string{"corpus_deflate.zip", "corpus_stored.zip"} {
		t.Run(name, func(t *testing.T) {
			zr := openFile(t, filepath.Join("testdata", name))
			checkCorpus(t, zr, true)
		})
	}
}

// TestCorpusPythonFull zips the whole corpus with Python's zipfile in the
// zarr-python chroot (skipped without it) and reads every case back.
func TestCorpusPythonFull(t *testing.T) {
	tool := pythonTool(t)
	out := t.TempDir()
	runPython(t, tool, []string{out}, "store/zip/testdata/make_zips.py", refdata.Dir(), out)
	for _, name := range []string{"corpus_deflate.zip", "corpus_stored.zip"} {
		t.Run(name, func(t *testing.T) { checkCorpus(t, openFile(t, filepath.Join(out, name)), false) })
	}
}

// writeCorpus archives the whole corpus directory with zip.Write into a
// file of dir and returns its path.
func writeCorpus(t *testing.T, dir string) string {
	t.Helper()
	src, err := fs.New(refdata.Dir(), fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "corpus.zip")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := zip.Write(context.Background(), f, corpusOnly{src}); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

// corpusOnly lists only the .zarr trees of the corpus directory (not its
// .npy files and manifest).
type corpusOnly struct{ *fs.Store }

func (c corpusOnly) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for k, err := range c.Store.List(ctx, prefix) {
			if err == nil && !strings.Contains(strings.SplitN(k, "/", 2)[0], ".zarr") {
				continue
			}
			if !yield(k, err) {
				return
			}
		}
	}
}

var _ zip.Source = corpusOnly{}

// TestCorpusGozarr archives the whole corpus with zip.Write and reads
// every case back through the zip Reader.
func TestCorpusGozarr(t *testing.T) {
	checkCorpus(t, openFile(t, writeCorpus(t, t.TempDir())), false)
}

// TestZarrPythonReadsGozarrZip archives the whole corpus with zip.Write
// and has zarr-python 3's ZipStore read every case of it (in the chroot;
// skipped without it).
func TestZarrPythonReadsGozarrZip(t *testing.T) {
	tool := pythonTool(t)
	dir := t.TempDir()
	path := writeCorpus(t, dir)
	out := runPython(t, tool, []string{dir}, "store/zip/testdata/check_zipstore.py", path, refdata.Dir())
	t.Log(strings.TrimSpace(out))
}
