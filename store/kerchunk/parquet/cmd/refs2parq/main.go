// Command refs2parq converts kerchunk JSON references (version 1, as
// zarrcat virtualize writes them) into kerchunk's Parquet layout (a
// directory: .zmetadata and <array>/refs.N.parq), which fsspec and
// gozarr's store/kerchunk/parquet read. It lives in the Parquet module so
// that zarrcat, in the core module, does not depend on parquet-go. From
// the repository root:
//
//	go run ./cmd/zarrcat virtualize -o /tmp/cf.json hdf5/testdata/cf.nc
//	(cd store/kerchunk/parquet && go run ./cmd/refs2parq /tmp/cf.json /tmp/cf.parq)
//
// -record-size sets the rows per refs file (kerchunk's default, 100000).
// References with "templates" or "gen" are refused: expand them first.
// Relative URLs are made absolute against REFS.json's directory.
//
// "refs2parq -json IN.parq" does the reverse: it writes the Parquet
// references of the directory IN.parq as one kerchunk JSON document to
// stdout, URLs as they are (zarrcat runs it to read a .parq TARGET, since
// it cannot link parquet-go).
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/gozarr/gozarr/hdf5"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/kerchunk/parquet"
)

func main() {
	rs := flag.Int("record-size", parquet.DefaultRecordSize, "rows per refs.N.parq file")
	toJSON := flag.Bool("json", false, "write the Parquet references of IN.parq to stdout as kerchunk JSON")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: refs2parq [-record-size N] REFS.json OUT.parq\n       refs2parq -json IN.parq")
		flag.PrintDefaults()
	}
	flag.Parse()
	if *toJSON {
		if flag.NArg() != 1 {
			flag.Usage()
			os.Exit(2)
		}
		if err := dump(flag.Arg(0), os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, "refs2parq:", err)
			os.Exit(1)
		}
		return
	}
	if flag.NArg() != 2 {
		flag.Usage()
		os.Exit(2)
	}
	if err := run(flag.Arg(0), flag.Arg(1), *rs); err != nil {
		fmt.Fprintln(os.Stderr, "refs2parq:", err)
		os.Exit(1)
	}
}

func run(in, out string, recordSize int) error {
	b, err := os.ReadFile(in)
	if err != nil {
		return err
	}
	base, err := filepath.Abs(filepath.Dir(in))
	if err != nil {
		return err
	}
	refs, err := parse(b, base)
	if err != nil {
		return fmt.Errorf("%s: %w", in, err)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	st, err := fs.New(out)
	if err != nil {
		return err
	}
	return parquet.Write(context.Background(), st, "", refs, recordSize)
}

// dump writes the Parquet references of the directory dir as kerchunk
// JSON to w.
func dump(dir string, w io.Writer) error {
	st, err := fs.New(dir, fs.ReadOnly())
	if err != nil {
		return err
	}
	ps, err := parquet.Open(context.Background(), st, "")
	if err != nil {
		return fmt.Errorf("%s: %w", dir, err)
	}
	return ps.WriteJSON(context.Background(), w)
}

// parse reads a kerchunk version 1 document (or version 0: the refs map
// itself) into the map parquet.Write takes. Relative URLs are made
// absolute against base (the directory of the JSON file), since the
// Parquet directory may be elsewhere.
func parse(b []byte, base string) (map[string]any, error) {
	var doc struct {
		Version   *int                       `json:"version"`
		Refs      map[string]json.RawMessage `json:"refs"`
		Templates json.RawMessage            `json:"templates"`
		Gen       json.RawMessage            `json:"gen"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, err
	}
	raw := doc.Refs
	if doc.Version == nil {
		if err := json.Unmarshal(b, &raw); err != nil {
			return nil, err
		}
	} else if *doc.Version != 1 {
		return nil, fmt.Errorf("kerchunk references version %d, want 0 or 1", *doc.Version)
	}
	if len(doc.Templates) > 0 && string(doc.Templates) != "null" || len(doc.Gen) > 0 && string(doc.Gen) != "null" {
		return nil, fmt.Errorf("references with templates or gen: expand them first")
	}
	refs := make(map[string]any, len(raw))
	for k, v := range raw {
		var s string
		if json.Unmarshal(v, &s) == nil {
			refs[k] = s
			continue
		}
		var arr []json.RawMessage
		if json.Unmarshal(v, &arr) == nil {
			var c hdf5.ChunkRef
			if len(arr) != 1 && len(arr) != 3 || json.Unmarshal(arr[0], &c.URL) != nil {
				return nil, fmt.Errorf("%q: a reference is [url] or [url, offset, length]", k)
			}
			if len(arr) == 3 && (json.Unmarshal(arr[1], &c.Offset) != nil || json.Unmarshal(arr[2], &c.Length) != nil) {
				return nil, fmt.Errorf("%q: offset and length must be non-negative integers", k)
			}
			if !strings.Contains(c.URL, "://") && !filepath.IsAbs(c.URL) {
				c.URL = filepath.Join(base, filepath.FromSlash(c.URL))
			}
			refs[k] = c
			continue
		}
		refs[k] = string(v) // an inline JSON document
	}
	return refs, nil
}
