package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/gozarr/gozarr/hdf5"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/kerchunk"
)

// Parquet references (kerchunk's LazyReferenceMapper layout, a directory
// such as refs.parq) are read through the refs2parq command of the
// Parquet module (store/kerchunk/parquet/cmd/refs2parq), which turns them
// into one kerchunk JSON document: the core module, zarrcat's, does not
// link parquet-go (its dependency rule), and the command is the one that
// already writes them. zarrcat finds it in $GOZARR_REFS2PARQ, next to its
// own executable, or on PATH.

// refs2parqDoc is the key the converted document is served under, in the
// Parquet directory's store (so that relative URLs resolve from there).
const refs2parqDoc = ".zarrcat-refs2parq.json"

// splitParq splits a local TARGET into a Parquet references directory
// (a path segment ending in .parq that is a directory with .zmetadata)
// and the node path inside it.
func splitParq(target string) (dir, node string, ok bool) {
	if strings.Contains(target, "://") && !strings.HasPrefix(target, "file://") {
		return "", "", false
	}
	parts := strings.Split(strings.TrimPrefix(target, "file://"), "/")
	for i := 1; i <= len(parts); i++ {
		if !strings.HasSuffix(strings.ToLower(parts[i-1]), ".parq") {
			continue
		}
		p := strings.Join(parts[:i], "/")
		if info, err := os.Stat(filepath.Join(p, ".zmetadata")); err == nil && info.Mode().IsRegular() {
			return p, strings.Join(parts[i:], "/"), true
		}
	}
	return "", "", false
}

// refs2parqPath returns the refs2parq command zarrcat runs.
func refs2parqPath() (string, error) {
	if p := os.Getenv("GOZARR_REFS2PARQ"); p != "" {
		return p, nil
	}
	if exe, err := os.Executable(); err == nil {
		p := filepath.Join(filepath.Dir(exe), "refs2parq")
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			return p, nil
		}
	}
	p, err := exec.LookPath("refs2parq")
	if err != nil {
		return "", fmt.Errorf("reading Parquet references needs the refs2parq command of the Parquet module "+
			"(cd store/kerchunk/parquet && go build -o DIR ./cmd/refs2parq, with DIR next to zarrcat or on PATH, or set GOZARR_REFS2PARQ): %w", err)
	}
	return p, nil
}

// openParqTarget opens a TARGET inside a Parquet references directory
// (ok false when TARGET names none): refs2parq converts the references,
// then they are read as a JSON references file standing in the
// directory, with the same allow-list (the directory and --allow).
func openParqTarget(ctx context.Context, target string) (store.Reader, string, bool, error) {
	dir, node, ok := splitParq(target)
	if !ok {
		return nil, "", false, nil
	}
	doc, err := runRefs2parq(ctx, "-json", dir)
	if err != nil {
		return nil, "", true, err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, "", true, err
	}
	st, err := fs.New(abs, fs.ReadOnly())
	if err != nil {
		return nil, "", true, err
	}
	allow, _ := ctx.Value(allowKey{}).([]string)
	ks, err := kerchunk.Open(ctx, docStore{st, doc}, refs2parqDoc, kerchunk.WithLocation(abs), kerchunk.Allow(allow...))
	if err != nil {
		return nil, "", true, fmt.Errorf("%s: %w", dir, err)
	}
	return ks, node, true, nil
}

// runRefs2parq runs refs2parq with args and returns its output (at most
// kerchunk.DefaultMaxSize bytes); its messages are shown only when it
// fails.
func runRefs2parq(ctx context.Context, args ...string) ([]byte, error) {
	cmd, err := refs2parqPath()
	if err != nil {
		return nil, err
	}
	var out limitedBuffer
	out.max = kerchunk.DefaultMaxSize
	var msg bytes.Buffer
	c := exec.CommandContext(ctx, cmd, args...)
	c.Stdout, c.Stderr = &out, &msg
	if err := c.Run(); err != nil {
		if errors.Is(err, errOutputLimit) || out.over {
			return nil, fmt.Errorf("refs2parq: references over %d bytes", out.max)
		}
		lines := strings.Split(strings.TrimSpace(msg.String()), "\n")
		return nil, fmt.Errorf("refs2parq %s: %w: %s", strings.Join(args, " "), err, lines[len(lines)-1])
	}
	return out.Bytes(), nil
}

var errOutputLimit = errors.New("output over the limit")

// limitedBuffer is a bytes.Buffer that refuses writes past max bytes.
type limitedBuffer struct {
	bytes.Buffer
	max  int64
	over bool
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if int64(b.Len())+int64(len(p)) > b.max {
		b.over = true
		return 0, errOutputLimit
	}
	return b.Buffer.Write(p)
}

// docStore serves doc at refs2parqDoc, every other key from Reader.
type docStore struct {
	store.Reader
	doc []byte
}

func (d docStore) Get(ctx context.Context, key string, br store.ByteRange) ([]byte, error) {
	if key != refs2parqDoc {
		return d.Reader.Get(ctx, key, br)
	}
	lo, hi, err := br.Resolve(int64(len(d.doc)))
	if err != nil {
		return nil, &store.KeyError{Op: "get", Key: key, Err: err}
	}
	return bytes.Clone(d.doc[lo:hi]), nil
}

// writeParq writes refs as Parquet references in the directory out,
// through refs2parq: the JSON document goes to a temporary file next to
// out (relative URLs are relative to it, as they would be to out).
func writeParq(ctx context.Context, refs *hdf5.Refs, out string) error {
	tmp, err := os.CreateTemp(filepath.Dir(out), ".zarrcat-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := refs.WriteJSON(tmp); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	_, err = runRefs2parq(ctx, tmp.Name(), out)
	return err
}
