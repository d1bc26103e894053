package main

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// pngTexts returns the tEXt chunks of a PNG file, keyword to text.
func pngTexts(t *testing.T, b []byte) map[string]string {
	t.Helper()
	out := map[string]string{}
	for i := 8; i+12 <= len(b); {
		n := int(binary.BigEndian.Uint32(b[i:]))
		if i+12+n > len(b) {
			t.Fatalf("chunk at %d runs past the end", i)
		}
		if string(b[i+4:i+8]) == "tEXt" {
			k, v, _ := bytes.Cut(b[i+8:i+8+n], []byte{0})
			out[string(k)] = string(v)
		}
		i += 12 + n
	}
	return out
}

// TestGetPNG (issue 27): get -o x.png draws a 2-D selection with viridis:
// every pixel equals what Matplotlib's colormap gives the value (NaN and
// fill values transparent), over the data's range or --vmin/--vmax, and a
// selection wider than --width is shown by striding; the picture's tEXt
// chunks hold the range and statistics.
func TestGetPNG(t *testing.T) {
	b, err := os.ReadFile("../../testdata/png/v3_field.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref map[string]json.RawMessage
	if err := json.Unmarshal(b, &ref); err != nil {
		t.Fatal(err)
	}
	var finite int
	json.Unmarshal(ref["finite_count"], &finite)
	a := "../../testdata/png/v3_field.zarr"
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
	}{
		{"auto", nil},
		{"fixed", []string{"--vmin", "0.25", "--vmax", "0.75"}},
		{"strided", []string{"--width", "10"}},
	} {
		var want struct {
			VMin, VMax float64
			Shape      []int
			RGBA       string
		}
		if err := json.Unmarshal(ref[c.name], &want); err != nil {
			t.Fatal(err)
		}
		rgba, _ := base64.StdEncoding.DecodeString(want.RGBA)
		out := filepath.Join(dir, c.name+".png")
		runOK(t, append(append([]string{"get", "-o", out}, c.args...), a)...)
		file, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(file))
		if err != nil {
			t.Fatal(err)
		}
		if r := img.Bounds(); r.Dy() != want.Shape[0] || r.Dx() != want.Shape[1] {
			t.Fatalf("%s: %v pixels, Matplotlib's %v", c.name, r, want.Shape)
		}
		bad, transparent := 0, 0
		for y := range want.Shape[0] {
			for x := range want.Shape[1] {
				r, g, bl, al := img.At(x, y).RGBA()
				got := [4]byte{byte(r >> 8), byte(g >> 8), byte(bl >> 8), byte(al >> 8)}
				k := 4 * (y*want.Shape[1] + x)
				exp := [4]byte(rgba[k : k+4])
				if exp[3] == 0 { // NaN, fill: Matplotlib's "bad" color, (0, 0, 0, 0)
					transparent++
				}
				if got != exp {
					if bad++; bad < 5 {
						t.Errorf("%s: pixel (%d, %d) %v, Matplotlib's %v", c.name, y, x, got, exp)
					}
				}
			}
		}
		if bad > 0 || transparent == 0 && c.name != "strided" {
			t.Errorf("%s: %d pixels differ from Matplotlib's, %d transparent", c.name, bad, transparent)
		}
		desc := pngTexts(t, file)["Description"]
		if !strings.Contains(desc, fmt.Sprintf("over [%s, %s]", fmtG(want.VMin), fmtG(want.VMax))) || !strings.Contains(desc, "viridis") {
			t.Errorf("%s: description %q, want the range [%v, %v]", c.name, desc, want.VMin, want.VMax)
		}
		if c.name == "auto" && !strings.Contains(desc, fmt.Sprintf("count %d\n", finite)) {
			t.Errorf("auto: description %q, want count %d", desc, finite)
		}
		if c.name == "strided" && !strings.Contains(desc, "every 4-th row and column") {
			t.Errorf("strided: description %q", desc)
		}
	}
	// --format png on stdout, and what it refuses.
	out := runOK(t, "get", "--format", "png", a, "0:2, :")
	if img, err := png.Decode(strings.NewReader(out)); err != nil || img.Bounds().Dx() != 40 || img.Bounds().Dy() != 2 {
		t.Errorf("--format png on stdout: %v", err)
	}
	for _, args := range [][]string{
		{"get", "--format", "png", a, "0"},
		{"get", "--format", "png", "--vmin", "1", a},
		{"get", "--format", "png", filepath.Join(refDir, "..", "vlen", "v3_string.zarr")},
		{"get", "--vmin", "0", "--vmax", "1", a},
	} {
		if err := runFail(t, args...); exitCode(err) != 2 {
			t.Errorf("%v: %v (exit %d), want a usage error", args, err, exitCode(err))
		}
	}
}
