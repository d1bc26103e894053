package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/internal/npy"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/zarr"
)

const vlenDir = "../../testdata/vlen"

// TestGetVarLen runs "zarrcat get" on every variable-length fixture: the
// .npy must be zarr-python's values as NumPy fixed-width "<U"/"|S" byte
// for byte, and the JSON output its values.
func TestGetVarLen(t *testing.T) {
	ctx := context.Background()
	ents, err := os.ReadDir(vlenDir)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok {
			continue
		}
		n++
		t.Run(name, func(t *testing.T) {
			target := filepath.Join(vlenDir, name+".zarr")
			out := filepath.Join(t.TempDir(), name+".npy")
			var stdout bytes.Buffer
			if err := run(ctx, []string{"get", "-q", "-o", out, target}, &stdout, &stdout); err != nil {
				t.Fatal(err)
			}
			got, err := npy.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			want, err := npy.ReadFile(filepath.Join(vlenDir, name+".npy"))
			if err != nil {
				t.Fatal(err)
			}
			if got.Descr != want.Descr || !bytes.Equal(got.Data, want.Data) || len(got.Shape) != len(want.Shape) {
				t.Errorf("npy %s %v, want %s %v", got.Descr, got.Shape, want.Descr, want.Shape)
			}
			var fix struct {
				DType  string   `json:"dtype"`
				Values []string `json:"values"`
			}
			b, err := os.ReadFile(filepath.Join(vlenDir, name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal(b, &fix); err != nil {
				t.Fatal(err)
			}
			stdout.Reset()
			if err := run(ctx, []string{"get", "--format", "json", target}, &stdout, &stdout); err != nil {
				t.Fatal(err)
			}
			// Flatten the nested JSON arrays.
			flat := strings.NewReplacer("[", "", "]", "").Replace(stdout.String())
			var vals []string
			if err := json.Unmarshal([]byte("["+strings.TrimSpace(flat)+"]"), &vals); err != nil {
				if strings.TrimSpace(flat) != "" || len(fix.Values) > 0 {
					t.Fatalf("JSON %q: %v", stdout.String(), err)
				}
			}
			if len(vals) != len(fix.Values) {
				t.Fatalf("%d JSON values, want %d", len(vals), len(fix.Values))
			}
			for i, w := range fix.Values {
				if fix.DType == "bytes" {
					raw, _ := base64.StdEncoding.DecodeString(w)
					w = "b" + strconv.QuoteToASCII(string(raw))
				}
				if vals[i] != w {
					t.Errorf("element %d: %q, want %q", i, vals[i], w)
				}
			}
		})
	}
	if n < 15 {
		t.Fatalf("only %d fixtures", n)
	}
}

// TestGetVarLenText checks get's text and csv output of strings and bytes,
// and that raw is refused.
func TestGetVarLenText(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct{ args, want string }{
		{"get " + vlenDir + "/v3_string_sharded.zarr 1:3,::2", "\"a\" \"tab\\tand \\\"quotes\\\"\" \"\"\n\"\" \"\" \"\"\n"},
		{"get --format csv " + vlenDir + "/v2_string_fill.zarr 2:5", "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx,N/A,N/A\n"}, // RFC 4180: quotes only where needed
		{"get " + vlenDir + "/v3_bytes_fill.zarr", "b\"\" b\"\\tz\" b\"\\x01fill\" b\"\\x01fill\" b\"\\x01fill\"\n"},
		{"get " + vlenDir + "/v2_string_0d.zarr", "\"scalar ✓\"\n"},
	} {
		var stdout bytes.Buffer
		if err := run(ctx, strings.Fields(c.args), &stdout, &stdout); err != nil {
			t.Fatalf("%s: %v", c.args, err)
		}
		if stdout.String() != c.want {
			t.Errorf("%s:\n%s\nwant\n%s", c.args, stdout.String(), c.want)
		}
	}
	var stdout bytes.Buffer
	if err := run(ctx, []string{"get", "--format", "raw", vlenDir + "/v3_string.zarr"}, &stdout, &stdout); err == nil {
		t.Error("raw output of strings: no error")
	}
}

// TestCpDiffVarLen copies string and bytes arrays (as they are, and
// re-chunked into shards) and diffs them with the source; a changed value
// is found.
func TestCpDiffVarLen(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for i, c := range []struct{ src, flags string }{
		{"v2_string.zarr", ""},
		{"v3_string_sharded.zarr", "--chunks 3,2 --codec zstd"},
		{"v3_bytes.zarr", "--chunks 4 --shards 8"},
	} {
		dst := filepath.Join(dir, strconv.Itoa(i)+".zarr")
		src := filepath.Join(vlenDir, c.src)
		var out bytes.Buffer
		if err := run(ctx, append(append([]string{"cp", "-q"}, strings.Fields(c.flags)...), src, dst), &out, &out); err != nil {
			t.Fatalf("cp %s: %v\n%s", c.src, err, out.String())
		}
		out.Reset()
		if err := run(ctx, []string{"diff", src, dst}, &out, &out); err != nil {
			t.Fatalf("diff %s: %v\n%s", c.src, err, out.String())
		}
		if !strings.Contains(out.String(), "hold the same values") {
			t.Errorf("diff %s: %s", c.src, out.String())
		}
	}
	// A copy with one value changed differs there.
	dst := filepath.Join(dir, "changed.zarr")
	var out bytes.Buffer
	if err := run(ctx, []string{"cp", "-q", filepath.Join(vlenDir, "v3_string_fill.zarr"), dst}, &out, &out); err != nil {
		t.Fatal(err)
	}
	st, err := fs.New(dst)
	if err != nil {
		t.Fatal(err)
	}
	b, err := zarr.OpenArray(ctx, st, "")
	if err != nil {
		t.Fatal(err)
	}
	if err := zarr.WriteStrings(ctx, b, []string{"changed"}, nd.Range(4, 5)); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	err = run(ctx, []string{"diff", "--json", filepath.Join(vlenDir, "v3_string_fill.zarr"), dst}, &out, &out)
	var r struct {
		Differing int64
		First     []int
		FirstA    string `json:"first_a"`
		FirstB    string `json:"first_b"`
	}
	if jerr := json.Unmarshal(out.Bytes(), &r); jerr != nil || err == nil {
		t.Fatalf("diff: %v %v\n%s", err, jerr, out.String())
	}
	if r.Differing != 1 || len(r.First) != 1 || r.First[0] != 4 || r.FirstA != `"N/A"` || r.FirstB != `"changed"` {
		t.Errorf("diff found %+v", r)
	}
}
