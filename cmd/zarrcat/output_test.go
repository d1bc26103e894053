//go:build unix

package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/gozarr/gozarr/internal/npy"
)

// TestGetToFIFO: get -o FIFO writes the .npy through the FIFO and leaves
// it a FIFO (the temporary-file-and-rename replaced special files with
// regular ones: /dev/null, run as root).
func TestGetToFIFO(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "out.npy")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(fifo)
		if err != nil {
			got <- nil
			return
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		got <- b
	}()
	target := filepath.Join(refDir, "v3_dtype_int16.zarr")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"get", "-o", fifo, target}, &out, &out); err != nil {
		t.Fatal(err)
	}
	// The mode first: a FIFO renamed over never gets a writer, and its
	// reader would wait for ever.
	info, err := os.Lstat(fifo)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("after get -o FIFO the target's mode is %v, want a named pipe", info.Mode())
	}
	b := <-got
	a, err := npy.Read(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	want, err := npy.ReadFile(filepath.Join(refDir, "v3_dtype_int16.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a.Data, want.Data) || !equalInts(a.Shape, want.Shape) {
		t.Fatalf("read %v %d bytes through the FIFO, want %v %d bytes", a.Shape, len(a.Data), want.Shape, len(want.Data))
	}
}

// TestGetToDevNull: get -o /dev/null succeeds and leaves /dev/null a
// character device; a link to a regular file is written through, the link
// kept.
func TestGetToDevNull(t *testing.T) {
	target := filepath.Join(refDir, "v3_dtype_int16.zarr")
	var out bytes.Buffer
	if err := run(context.Background(), []string{"get", "--format", "npy", "-o", os.DevNull, target}, &out, &out); err != nil {
		t.Fatal(err)
	}
	info, err := os.Lstat(os.DevNull)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode()&os.ModeCharDevice == 0 {
		t.Fatalf("%s has mode %v after get, want a character device", os.DevNull, info.Mode())
	}

	dir := t.TempDir()
	file, link := filepath.Join(dir, "real.txt"), filepath.Join(dir, "link.txt")
	if err := os.WriteFile(file, []byte("old content, longer than the output\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	if err := run(context.Background(), []string{"get", "-o", link, target, "0,0:3"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if info, err := os.Lstat(link); err != nil || info.Mode()&os.ModeSymlink == 0 {
		t.Fatalf("link after get: %v, %v; want a symbolic link", info, err)
	}
	b, _ := os.ReadFile(file)
	var exp bytes.Buffer
	if err := run(context.Background(), []string{"get", target, "0,0:3"}, &exp, &exp); err != nil {
		t.Fatal(err)
	}
	if string(b) != exp.String() || exp.Len() == 0 {
		t.Fatalf("file behind the link holds %q, want %q", b, exp.String())
	}
}
