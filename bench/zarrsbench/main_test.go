package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/internal/refdata"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

// TestValue pins the formula to zarrs' generator at a few points
// (generate_benchmark_array.rs: (x + y*y/32 + z*z*z) % 65536, integer
// arithmetic, at [z, y, x]).
func TestValue(t *testing.T) {
	for _, c := range []struct {
		z, y, x int
		want    uint16
	}{
		{0, 0, 0, 0}, {0, 0, 7, 7}, {0, 31, 0, 30}, {0, 32, 0, 32}, {2, 0, 0, 8},
		{1023, 1023, 1023, uint16((1023 + 1023*1023/32 + 1023*1023*1023) % 65536)},
	} {
		if got := value(c.z, c.y, c.x); got != c.want {
			t.Errorf("value(%d, %d, %d) = %d, want %d", c.z, c.y, c.x, got, c.want)
		}
	}
}

// TestBothReadBoth writes the three layouts at 64³ with gozarr and, when
// the chroot is there, with zarr-python 3.4, and checks that each reads
// every value of both (gozarr in process, zarr-python through the
// script's verify), then runs every gozarr workload on zarr-python's
// arrays as a child process would.
func TestBothReadBoth(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	g := geom(64)
	var py string
	if os.Getenv("GOZARR_NO_PYTHON") == "" {
		py = pythonOrSkip(t)
	}
	writers := []string{"gozarr"}
	if py != "" {
		writers = append(writers, "python")
	}
	for _, w := range writers {
		for _, l := range layouts {
			path, err := ensure(ctx, dir, w, l, g, py)
			if err != nil {
				t.Fatal(err)
			}
			a := open(t, path)
			if l == "sharded" && a.Sharding() == nil {
				t.Fatalf("%s's %s array is not sharded", w, l)
			}
			res, err := verify(ctx, a)
			if err != nil || res.Checked != 64*64*64 {
				t.Fatalf("gozarr reading %s's %s: %v (%d values checked)", w, l, err, res.Checked)
			}
			for _, wl := range workloads(l + "/") {
				if wl.layout != l {
					continue // "compressed/" is in "uncompressed/" too
				}
				var res childResult
				var err error
				switch wl.args[0] {
				case "read":
					conc := map[string]int{"1": 1, "2": 2, "8": 8}[wl.args[2]]
					res, err = read(ctx, a, wl.args[1], conc)
				case "roundtrip":
					out := filepath.Join(dir, "rt-"+w+"-"+l)
					res, err = roundtrip(ctx, a, out)
					if err == nil {
						var v childResult
						v, err = verify(ctx, open(t, out))
						if err == nil && v.Checked != 64*64*64 {
							t.Errorf("round trip of %s's %s: %d values", w, l, v.Checked)
						}
					}
				}
				if err != nil || res.Checked == 0 {
					t.Errorf("gozarr %s/%s on %s's array: %v (%d checked)", l, wl.name, w, err, res.Checked)
				}
			}
			if py == "" {
				continue
			}
			out, err := pythonCmd(py, "verify", path).CombinedOutput()
			if err != nil || !strings.Contains(string(out), `"checked": 262144`) {
				t.Errorf("zarr-python reading %s's %s: %v\n%s", w, l, err, out)
			}
		}
	}
	if py == "" {
		t.Log("zarr-python chroot absent: only gozarr's arrays checked")
	}
}

func pythonOrSkip(t *testing.T) (py string) {
	t.Run("python", func(t *testing.T) { py = refdata.PythonTool(t) })
	return py
}

func open(t *testing.T, path string) *zarr.Array {
	t.Helper()
	st, err := fs.New(path, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.OpenArray(context.Background(), st, "")
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestCommand runs the command itself at 16³ with gozarr's data (no
// peers): each workload in a fresh child process, the table printed.
func TestCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the command")
	}
	bin := filepath.Join(t.TempDir(), "zarrsbench")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	cmd := exec.Command(bin, "-size", "16", "-reps", "1", "-data", "gozarr", "-peers=false", "-dir", t.TempDir())
	cmd.Dir = "../.."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"| sharded | subchunks/c8 |", "| compressed | roundtrip |", "| uncompressed | chunks/c2 |"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
