package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

const extDir = "../../testdata/extdtypes"

// TestGetExtDTypes runs "zarrcat get --format npy" on every extension data
// type fixture (strings, datetimes, timedeltas, v2 and v3) and compares
// the .npy with zarr-python's, then checks each element's text against
// NAME.txt (NumPy's str: ISO 8601, NaT, quoted strings).
func TestGetExtDTypes(t *testing.T) {
	ctx := context.Background()
	ents, err := os.ReadDir(extDir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := fs.New(extDir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".zarr")
		if !ok {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(t.TempDir(), name+".npy")
			var stdout bytes.Buffer
			if err := run(ctx, []string{"get", "--format", "npy", "-o", out, filepath.Join(extDir, e.Name())}, &stdout, &stdout); err != nil {
				t.Fatal(err)
			}
			got, err := npy.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			want, err := npy.ReadFile(filepath.Join(extDir, name+".npy"))
			if err != nil {
				t.Fatal(err)
			}
			if want.Descr[0] != '>' && (got.Descr != want.Descr || !bytes.Equal(got.Data, want.Data)) {
				t.Errorf("npy %s %x, want %s %x", got.Descr, got.Data, want.Descr, want.Data)
			}
			a, err := zarr.OpenArray(ctx, st, e.Name())
			if err != nil {
				t.Fatal(err)
			}
			dt := a.Metadata().DataType
			txt, err := os.ReadFile(filepath.Join(extDir, name+".txt"))
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSuffix(string(txt), "\n"), "\n")
			if len(lines)*dt.Size() != len(got.Data) {
				t.Fatalf("%d lines for %d bytes", len(lines), len(got.Data))
			}
			for i, w := range lines {
				if s := string(appendValue(nil, dt, got.Data[i*dt.Size():(i+1)*dt.Size()])); s != w {
					t.Errorf("element %d printed %s, want %s", i, s, w)
				}
			}
		})
	}
	if n < 40 {
		t.Fatalf("only %d fixtures", n)
	}
}

func TestAppendBFloat16(t *testing.T) {
	for _, c := range []struct {
		bits uint16
		want string
	}{{0x3f80, "1"}, {0x3dcd, "0.1"}, {0xc049, "-3.14"}, {0x7fc0, "nan"}, {0xff80, "-inf"}, {0x0001, "9e-41"}} {
		got := string(appendValue(nil, dtype.TypeBFloat16, []byte{byte(c.bits), byte(c.bits >> 8)}))
		if got != c.want {
			t.Errorf("%#04x printed %s, want %s", c.bits, got, c.want)
		}
	}
}
