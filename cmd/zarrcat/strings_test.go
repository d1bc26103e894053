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
		{"get --format csv " + vlenDir + "/v2_string_fill.zarr 2:5", "\"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\",\"N/A\",\"N/A\"\n"},
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
