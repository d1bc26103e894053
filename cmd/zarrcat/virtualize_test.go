package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestVirtualizeHelpExamples runs the examples of zarrcat help virtualize
// and checks that each writes kerchunk JSON version 1 naming the URL asked.
func TestVirtualizeHelpExamples(t *testing.T) {
	tmp := t.TempDir()
	n := 0
	for _, line := range strings.Split(virtualizeHelp, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "zarrcat ") || strings.Contains(line, "[") {
			continue
		}
		line = strings.ReplaceAll(line, "hdf5/testdata/", "../../hdf5/testdata/")
		line = strings.ReplaceAll(line, "/tmp/", tmp+"/")
		args := strings.Fields(line)[1:]
		var out bytes.Buffer
		if err := run(context.Background(), args, &out, &out); err != nil {
			t.Fatalf("%q: %v", line, err)
		}
		var o string
		for i, a := range args {
			if a == "-o" {
				o = args[i+1]
			}
		}
		b, err := os.ReadFile(o)
		if err != nil {
			t.Fatal(err)
		}
		var doc struct {
			Version int            `json:"version"`
			Refs    map[string]any `json:"refs"`
		}
		if err := json.Unmarshal(b, &doc); err != nil || doc.Version != 1 || doc.Refs[".zgroup"] == nil {
			t.Fatalf("%q wrote no kerchunk v1 document (%v)", line, err)
		}
		wantURL := args[len(args)-1]
		for i, a := range args {
			if a == "--url" {
				wantURL = args[i+1]
			}
		}
		if !filepath.IsAbs(wantURL) && !strings.Contains(wantURL, "://") {
			wantURL, _ = filepath.Abs(wantURL)
		}
		refs := 0
		for k, v := range doc.Refs {
			if r, ok := v.([]any); ok {
				if r[0] != wantURL {
					t.Fatalf("%q: %s names %v, want %s", line, k, r[0], wantURL)
				}
				refs++
			}
		}
		if refs == 0 {
			t.Fatalf("%q: no chunk reference", line)
		}
		n++
	}
	if n == 0 {
		t.Fatal("no example")
	}
}

// TestVirtualizeErrors: a file that is not HDF5, a missing file, a
// directory and no argument are clear errors.
func TestVirtualizeErrors(t *testing.T) {
	for _, args := range [][]string{
		{"virtualize", "../../hdf5/testdata/gen.py"},
		{"virtualize", "../../hdf5/testdata/nonexistent.h5"},
		{"virtualize", "../../hdf5/testdata"},
		{"virtualize"},
	} {
		var out bytes.Buffer
		if err := run(context.Background(), args, &out, &out); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
