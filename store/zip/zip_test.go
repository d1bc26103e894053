package zip_test

import (
	stdzip "archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/http"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/s3"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/store/storetest"
	"github.com/gozarr/gozarr/store/zip"
	"github.com/gozarr/gozarr/store/zip/ziptest"
)

// archiveKey is where the tests keep archives in their source stores.
const archiveKey = "arch/data.zip"

// sortedKeys returns the keys of contents in lexical order.
func sortedKeys(contents map[string][]byte) []string {
	return slices.Sorted(maps.Keys(contents))
}

// gozarrZip archives contents with zip.Write.
func gozarrZip(t testing.TB, contents map[string][]byte) []byte { return ziptest.Archive(t, contents) }

// stdlibZip archives contents with archive/zip's Create (data descriptors
// after each entry) using method, plus the extra entries given in order
// after them.
func stdlibZip(t testing.TB, contents map[string][]byte, method uint16, extra ...[2]string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := stdzip.NewWriter(&buf)
	add := func(name string, v []byte) {
		f, err := w.CreateHeader(&stdzip.FileHeader{Name: name, Method: method})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write(v); err != nil {
			t.Fatal(err)
		}
	}
	for _, k := range sortedKeys(contents) {
		add(k, contents[k])
	}
	for _, e := range extra {
		add(e[0], []byte(e[1]))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// put stores an archive under archiveKey in a fresh store of the kind
// named (the HTTP store reads it from a file server), and returns that
// store.
func put(t testing.TB, kind string, archive []byte) store.Reader {
	t.Helper()
	var st store.Store
	switch kind {
	case "mem":
		st = mem.New()
	case "fs":
		var err error
		if st, err = fs.New(t.TempDir()); err != nil {
			t.Fatal(err)
		}
	case "http":
		// A plain file server (Range and suffix ranges, HEAD) over a
		// directory holding the archive.
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "arch"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(archiveKey)), archive, 0o644); err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(nethttp.FileServer(nethttp.Dir(dir)))
		t.Cleanup(srv.Close)
		hs, err := http.New(srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		return hs
	case "s3-fake":
		st = s3test.NewFake(t, "zips").Store(t, "p")
	case "s3":
		st = s3test.FromEnv(t).Store(t, fmt.Sprintf("gozarr-zip-test/%d", os.Getpid()))
		t.Cleanup(func() { _ = st.Delete(context.Background(), archiveKey) })
	default:
		t.Fatalf("unknown store kind %q", kind)
	}
	if err := st.Set(context.Background(), archiveKey, archive); err != nil {
		t.Fatal(err)
	}
	return st
}

func open(t testing.TB, src store.Reader) *zip.Reader {
	t.Helper()
	r, err := zip.Open(context.Background(), src, archiveKey)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// noSize hides a source's Size (and everything else but Get), so Open
// must work the archive's size out from its end records.
type noSize struct{ r store.Reader }

func (n noSize) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	return n.r.Get(ctx, key, r)
}

// TestConformance runs the store conformance suite over archives written
// by gozarr and by archive/zip (stored and deflate), held in memory, on
// disk, behind an HTTP file server and on S3 (the in-process fake, and a
// real server when GOZARR_S3_* name one).
func TestConformance(t *testing.T) {
	for _, tc := range []struct {
		name, kind string
		make       func(testing.TB, map[string][]byte) []byte
		hideSize   bool
	}{
		{"gozarr/mem", "mem", gozarrZip, false},
		{"gozarr/fs", "fs", gozarrZip, false},
		{"gozarr/s3-fake", "s3-fake", gozarrZip, false},
		{"gozarr/s3", "s3", gozarrZip, false},
		{"gozarr/http", "http", gozarrZip, false},
		{"stdlib-deflate/http", "http", func(t testing.TB, c map[string][]byte) []byte { return stdlibZip(t, c, stdzip.Deflate) }, false},
		{"gozarr/no-size", "mem", gozarrZip, true},
		{"stdlib-stored/fs", "fs", func(t testing.TB, c map[string][]byte) []byte { return stdlibZip(t, c, stdzip.Store) }, false},
		{"stdlib-deflate/mem", "mem", func(t testing.TB, c map[string][]byte) []byte { return stdlibZip(t, c, stdzip.Deflate) }, false},
		{"stdlib-deflate/no-size", "mem", func(t testing.TB, c map[string][]byte) []byte { return stdlibZip(t, c, stdzip.Deflate) }, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.kind == "s3" {
				s3test.FromEnv(t) // skips without a server
			}
			// The suite asks for the same contents in every subtest:
			// archive them once (deflating 3 MiB under -race is slow).
			var arch []byte
			storetest.TestReader(t, func(t *testing.T, contents map[string][]byte) store.Reader {
				if arch == nil {
					arch = tc.make(t, contents)
				}
				src := put(t, tc.kind, arch)
				if tc.hideSize {
					src = noSize{src}
				}
				return open(t, src)
			})
		})
	}
}

// TestLastEntryWins reads archives in which names repeat (as appending to
// a zip with zarr-python's ZipStore leaves them): the last entry of the
// central directory is the value, and the name is listed once.
func TestLastEntryWins(t *testing.T) {
	ctx := context.Background()
	base := map[string][]byte{"a": []byte("old a"), "b/zarr.json": []byte("{}"), "c": []byte("c")}
	for _, method := range []uint16{stdzip.Store, stdzip.Deflate} {
		arch := stdlibZip(t, base, method, [2]string{"a", "new a, longer"}, [2]string{"c", ""}, [2]string{"a", "newest a"})
		r := open(t, put(t, "mem", arch))
		for key, want := range map[string]string{"a": "newest a", "b/zarr.json": "{}", "c": ""} {
			got, err := r.Get(ctx, key, store.Full())
			if err != nil || string(got) != want {
				t.Errorf("method %d: Get(%q) = %q, %v; want %q", method, key, got, err, want)
			}
			if n, err := r.Size(ctx, key); err != nil || n != int64(len(want)) {
				t.Errorf("method %d: Size(%q) = %d, %v; want %d", method, key, n, err, len(want))
			}
		}
		keys := storetest.ListKeys(t, r, "")
		if want := []string{"a", "b/zarr.json", "c"}; !slices.Equal(keys, want) {
			t.Errorf("method %d: List = %q, want %q", method, keys, want)
		}
	}
}

// TestSkipsNonKeys checks that directory entries and names that are not
// store keys are not served, and do not hide the valid entries.
func TestSkipsNonKeys(t *testing.T) {
	ctx := context.Background()
	arch := stdlibZip(t, map[string][]byte{"ok": []byte("ok")}, stdzip.Store,
		[2]string{"dir/", ""}, [2]string{"../evil", "x"}, [2]string{"/abs", "x"}, [2]string{"a//b", "x"}, [2]string{"dir/v", "v"})
	r := open(t, put(t, "mem", arch))
	keys, dirs, err := r.ListDir(ctx, "")
	if err != nil || !slices.Equal(keys, []string{"ok"}) || !slices.Equal(dirs, []string{"dir/"}) {
		t.Errorf("ListDir = %q, %q, %v; want [ok], [dir/]", keys, dirs, err)
	}
	for _, k := range []string{"dir", "evil", "abs", "a/b"} {
		if _, err := r.Get(ctx, k, store.Full()); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("Get(%q): err = %v, want ErrNotFound", k, err)
		}
	}
}

// TestPrefixedArchive reads an archive with data before it (a
// self-extractor's stub): offsets shift, through a source that knows the
// archive's size.
func TestPrefixedArchive(t *testing.T) {
	ctx := context.Background()
	contents := map[string][]byte{"zarr.json": []byte(`{"zarr_format":3}`), "c/0": bytes.Repeat([]byte("x"), 70_000)}
	for name, arch := range map[string][]byte{
		"gozarr": gozarrZip(t, contents),
		"stdlib": stdlibZip(t, contents, stdzip.Deflate),
	} {
		stub := bytes.Repeat([]byte("#!stub\n"), 20_000) // pushes the directory out of the first suffix read
		r := open(t, put(t, "mem", append(stub, arch...)))
		for k, want := range contents {
			got, err := r.Get(ctx, k, store.Full())
			if err != nil || !bytes.Equal(got, want) {
				t.Errorf("%s: Get(%q) = %d bytes, %v; want %d", name, k, len(got), err, len(want))
			}
		}
	}
}

// TestRequests counts what reading an archive on S3 costs: opening is a
// suffix read, a HEAD and, for a directory the suffix does not hold, one
// ranged read; a stored entry's first read takes its local header along,
// and later reads are one ranged GET each.
func TestRequests(t *testing.T) {
	ctx := context.Background()
	contents := map[string][]byte{"zarr.json": []byte("{}")}
	for i := range 3000 {
		contents[fmt.Sprintf("c/%d/0", i)] = bytes.Repeat([]byte{byte(i)}, 100)
	}
	contents["shard"] = bytes.Repeat([]byte("0123456789"), 30_000)
	arch := gozarrZip(t, contents)
	srv := s3test.NewFake(t, "zips")
	rec := s3test.NewRecorder(nil)
	st := srv.Store(t, "p", s3.WithHTTPClient(rec.Client()))
	if err := st.Set(ctx, archiveKey, arch); err != nil {
		t.Fatal(err)
	}
	rec.Reset()
	r := open(t, st)
	if g, h := rec.Count("GET"), rec.Count("HEAD"); g != 2 || h != 1 {
		t.Errorf("Open: %d GETs and %d HEADs, want 2 and 1 (directory of %d entries)", g, h, len(contents))
	}
	for _, step := range []struct {
		name string
		r    store.ByteRange
		want []byte
		gets int
	}{
		{"first", store.OffsetLen(10, 20), contents["shard"][10:30], 1},
		{"suffix", store.Suffix(16), contents["shard"][300_000-16:], 1},
		{"far", store.OffsetLen(250_000, 5), contents["shard"][250_000:250_005], 1},
		{"empty", store.OffsetLen(5, 0), []byte{}, 0},
	} {
		rec.Reset()
		got, err := r.Get(ctx, "shard", step.r)
		if err != nil || !bytes.Equal(got, step.want) {
			t.Errorf("%s: Get(shard, %v) = %q, %v; want %q", step.name, step.r, got, err, step.want)
		}
		if n := rec.Count("GET"); n != step.gets {
			t.Errorf("%s: %d GETs, want %d", step.name, n, step.gets)
		}
	}
	// A far first read of an entry reads its local header on its own.
	rec.Reset()
	got, err := r.Get(ctx, "c/7/0", store.Full())
	if err != nil || !bytes.Equal(got, contents["c/7/0"]) || rec.Count("GET") != 1 {
		t.Errorf("Get(c/7/0) = %d bytes, %v, with %d GETs; want 100 bytes with 1 GET", len(got), err, rec.Count("GET"))
	}
	rec.Reset()
	parts, err := r.GetRanges(ctx, "shard", []store.ByteRange{store.OffsetLen(0, 4), store.OffsetLen(100, 4), store.Suffix(3)})
	if err != nil || string(parts[0]) != "0123" || string(parts[1]) != "0123" || string(parts[2]) != "789" {
		t.Errorf("GetRanges = %q, %v", parts, err)
	}
	if n := rec.Count("GET"); n != 1 {
		t.Errorf("GetRanges: %d GETs, want 1 (coalesced by the S3 store)", n)
	}
	if r.MaxConcurrency() != st.MaxConcurrency() {
		t.Errorf("MaxConcurrency = %d, want the S3 store's %d", r.MaxConcurrency(), st.MaxConcurrency())
	}
}

// TestWriterOutput checks Write's archive with archive/zip, an independent
// reader: the entries, their order (metadata breadth-first, root zarr.json
// first, then chunks), stored method, ZIP64 extras and the comment.
func TestWriterOutput(t *testing.T) {
	ctx := context.Background()
	src := mem.New()
	keys := []string{"c/0/0", "a/zarr.json", "zarr.json", "a/b/zarr.json", "a/c/0", ".zattrs", "b/.zarray", "b/.zattrs", "b/0.0", "a/b/c/1", "é/zarr.json"}
	for i, k := range keys {
		if err := src.Set(ctx, k, bytes.Repeat([]byte{byte('A' + i)}, i*37)); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := zip.Write(ctx, &buf, src, zip.WithComment(zip.OMEComment("0.5"))); err != nil {
		t.Fatal(err)
	}
	zr, err := stdzip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if f.Method != stdzip.Store {
			t.Errorf("%s: method %d, want stored", f.Name, f.Method)
		}
		i := slices.Index(keys, f.Name)
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(rc) // checks the CRC
		rc.Close()
		if want := bytes.Repeat([]byte{byte('A' + i)}, i*37); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: read %d bytes, %v; want %d", f.Name, len(got), err, len(want))
		}
		if f.Name == "é/zarr.json" && f.NonUTF8 {
			t.Errorf("%s: not flagged UTF-8", f.Name)
		}
	}
	want := []string{"zarr.json", ".zattrs", "a/zarr.json", "b/.zarray", "b/.zattrs", "é/zarr.json", "a/b/zarr.json", "a/b/c/1", "a/c/0", "b/0.0", "c/0/0"}
	if !slices.Equal(names, want) {
		t.Errorf("entries %q,\nwant %q", names, want)
	}
	if zr.Comment != `{"ome":{"version":"0.5"}}` {
		t.Errorf("comment %q", zr.Comment)
	}
	// Every local and central header carries the ZIP64 extra field, and the
	// archive ends with the ZIP64 end records.
	b := buf.Bytes()
	if n := bytes.Count(b, []byte{0x01, 0x00, 16, 0}); n < len(keys) {
		t.Errorf("%d local ZIP64 extras, want %d", n, len(keys))
	}
	end := len(b) - 22 - len(zr.Comment)
	if binary.LittleEndian.Uint32(b[end-20:]) != 0x07064b50 || binary.LittleEndian.Uint32(b[end-76:]) != 0x06064b50 {
		t.Errorf("no ZIP64 end record and locator before the end record")
	}
	// The same entries make the same archive.
	var again bytes.Buffer
	if err := zip.Write(ctx, &again, src, zip.WithComment(zip.OMEComment("0.5"))); err != nil || !bytes.Equal(again.Bytes(), b) {
		t.Errorf("a second Write made a different archive (%v)", err)
	}
}

// TestWritePrefix archives one node of a store as the archive's root.
func TestWritePrefix(t *testing.T) {
	ctx := context.Background()
	src := mem.New()
	for _, k := range []string{"img.zarr/zarr.json", "img.zarr/c/0", "img.zarrx/zarr.json", "other"} {
		if err := src.Set(ctx, k, []byte(k)); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := zip.Write(ctx, &buf, src, zip.WithPrefix("img.zarr")); err != nil {
		t.Fatal(err)
	}
	r := open(t, put(t, "mem", buf.Bytes()))
	keys, dirs, err := r.ListDir(ctx, "")
	if err != nil || !slices.Equal(keys, []string{"zarr.json"}) || !slices.Equal(dirs, []string{"c/"}) {
		t.Errorf("ListDir = %q, %q, %v", keys, dirs, err)
	}
	if got, err := r.Get(ctx, "c/0", store.Full()); err != nil || string(got) != "img.zarr/c/0" {
		t.Errorf("Get(c/0) = %q, %v", got, err)
	}
}

func TestWriterErrors(t *testing.T) {
	ctx := context.Background()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	if err := w.Add(ctx, "a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(ctx, "a", []byte("2")); !errors.Is(err, zip.ErrDuplicate) {
		t.Errorf("second Add(a): err = %v, want ErrDuplicate", err)
	}
	for _, k := range storetest.HostileKeys {
		if err := w.Add(ctx, k, nil); !errors.Is(err, store.ErrInvalidKey) {
			t.Errorf("Add(%q): err = %v, want ErrInvalidKey", k, err)
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := w.Add(cctx, "b", nil); !errors.Is(err, context.Canceled) {
		t.Errorf("Add with a cancelled context: err = %v", err)
	}
	if err := w.SetComment(make([]byte, 70_000)); err == nil {
		t.Error("SetComment of 70000 bytes: no error")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Add(ctx, "c", nil); !errors.Is(err, zip.ErrClosed) {
		t.Errorf("Add after Close: err = %v, want ErrClosed", err)
	}
	zr, err := stdzip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
	if err != nil || len(zr.File) != 1 || zr.File[0].Name != "a" {
		t.Fatalf("archive after errors: %v", err)
	}
	// A failing destination makes Add and Close fail, and stays failed.
	fw := zip.NewWriter(failWriter{})
	if err := fw.Add(ctx, "a", []byte("x")); err == nil {
		t.Error("Add to a failing writer: no error")
	}
	if err := fw.Close(); err == nil {
		t.Error("Close of a failed writer: no error")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestOrder(t *testing.T) {
	for _, tc := range []struct {
		keys   []string
		prefix string
		want   []string
	}{
		{[]string{"b", "zarr.json", "a"}, "", []string{"zarr.json", "a", "b"}},
		{[]string{"x/zarr.json", "a/b/zarr.json", "zarr.json", ".zgroup", "a/0"}, "", []string{"zarr.json", ".zgroup", "x/zarr.json", "a/b/zarr.json", "a/0"}},
		{[]string{"p/a/zarr.json", "p/zarr.json", "p/c/0"}, "p/", []string{"p/zarr.json", "p/a/zarr.json", "p/c/0"}},
		{[]string{"c/zarr.json/0", "zarr.jsonx"}, "", []string{"c/zarr.json/0", "zarr.jsonx"}},
		{nil, "", []string{}},
	} {
		if got := zip.Order(tc.keys, tc.prefix); !slices.Equal(got, tc.want) {
			t.Errorf("Order(%q, %q) = %q, want %q", tc.keys, tc.prefix, got, tc.want)
		}
	}
}

// corrupt returns an archive with its bytes at off replaced by b.
func corrupt(arch []byte, off int, b ...byte) []byte {
	c := slices.Clone(arch)
	if off < 0 {
		off += len(c)
	}
	copy(c[off:], b)
	return c
}

// TestBadArchives opens and reads damaged archives: each fails with
// ErrFormat (or ErrUnsupported), at Open or at the read, never with a
// panic or a wrong value.
func TestBadArchives(t *testing.T) {
	ctx := context.Background()
	contents := map[string][]byte{"k": []byte("hello, zip"), "z": bytes.Repeat([]byte("z"), 1000)}
	good := gozarrZip(t, contents)
	deflated := stdlibZip(t, contents, stdzip.Deflate)
	le := binary.LittleEndian
	local := bytes.Index(good, []byte("PK\x03\x04"))
	cen := bytes.Index(good, []byte("PK\x01\x02"))
	end64 := bytes.LastIndex(good, []byte("PK\x06\x06"))
	u64 := func(v uint64) []byte { return le.AppendUint64(nil, v) }
	for _, tc := range []struct {
		name    string
		arch    []byte
		openErr error // at Open, else at reading every key
		readErr error
	}{
		{"empty", []byte{}, zip.ErrFormat, nil},
		{"not a zip", bytes.Repeat([]byte("x"), 100), zip.ErrFormat, nil},
		{"truncated end", good[:len(good)-5], zip.ErrFormat, nil},
		{"directory truncated", good[cen+10:], zip.ErrFormat, nil},
		{"directory size huge", corrupt(good, end64+40, u64(1<<40)...), zip.ErrUnsupported, nil},
		{"directory offset past end", corrupt(good, end64+48, u64(1<<50)...), zip.ErrFormat, nil},
		{"bad record signature", corrupt(good, cen, 'X'), zip.ErrFormat, nil},
		{"multi-disk", corrupt(good, end64+16, 1), zip.ErrUnsupported, nil},
		{"wrong record count", corrupt(good, end64+32, u64(7)...), zip.ErrFormat, nil},
		{"entry offset past end", corrupt(good, cen+46+1+4+16, u64(1<<40)...), zip.ErrFormat, nil},
		{"bad local signature", corrupt(good, local, 'X'), nil, zip.ErrFormat},
		{"local name differs", corrupt(good, local+30, 'q'), nil, zip.ErrFormat},
		{"bad crc", corrupt(good, cen+16, 0, 0, 0, 0), nil, zip.ErrFormat},
		{"data flipped", corrupt(good, local+30+1+20, '!'), nil, zip.ErrFormat},
		{"encrypted", corrupt(good, cen+8, 1), nil, zip.ErrUnsupported},
		{"unknown method", corrupt(good, cen+10, 99), nil, zip.ErrUnsupported},
		{"deflate data broken", corrupt(deflated, bytes.Index(deflated, []byte("PK\x03\x04"))+30+1, 0xff, 0xff, 0xff), nil, zip.ErrFormat},
		{"deflate size lies", corrupt(deflated, bytes.Index(deflated, []byte("PK\x01\x02"))+24, 0xff, 0xff, 0, 0), nil, zip.ErrFormat},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := zip.Open(ctx, put(t, "mem", tc.arch), archiveKey)
			if tc.openErr != nil {
				if !errors.Is(err, tc.openErr) {
					t.Fatalf("Open: err = %v, want %v", err, tc.openErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			failed := false
			for _, k := range sortedKeys(contents) {
				got, err := r.Get(ctx, k, store.Full())
				if err != nil {
					if !errors.Is(err, tc.readErr) {
						t.Errorf("Get(%q): err = %v, want %v", k, err, tc.readErr)
					}
					var ke *store.KeyError
					if !errors.As(err, &ke) || ke.Key != k {
						t.Errorf("Get(%q): err %v does not name the key", k, err)
					}
					failed = true
				} else if !bytes.Equal(got, contents[k]) {
					t.Errorf("Get(%q) = %q: a wrong value without an error", k, got)
				}
			}
			if !failed {
				t.Errorf("no read failed, want %v", tc.readErr)
			}
		})
	}
}

// TestMissingArchive: Open of a key the source does not hold is the
// source's ErrNotFound.
func TestMissingArchive(t *testing.T) {
	_, err := zip.Open(context.Background(), mem.New(), "nope.zip")
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("Open(missing): err = %v, want ErrNotFound", err)
	}
	if _, err := zip.Open(context.Background(), mem.New(), "../x.zip"); !errors.Is(err, store.ErrInvalidKey) {
		t.Errorf("Open(../x.zip): err = %v, want ErrInvalidKey", err)
	}
}

// TestLocalFile opens a .zip on disk through the fs store of its
// directory, as storeurl does.
func TestLocalFile(t *testing.T) {
	dir := t.TempDir()
	arch := gozarrZip(t, map[string][]byte{"zarr.json": []byte("{}")})
	if err := os.WriteFile(filepath.Join(dir, "x.ozx"), arch, 0o644); err != nil {
		t.Fatal(err)
	}
	src, err := fs.New(dir, fs.ReadOnly())
	if err != nil {
		t.Fatal(err)
	}
	r, err := zip.Open(context.Background(), src, "x.ozx")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := r.Get(context.Background(), "zarr.json", store.Full()); err != nil || string(got) != "{}" {
		t.Errorf("Get = %q, %v", got, err)
	}
	if !strings.HasSuffix(r.Key(), ".ozx") {
		t.Errorf("Key() = %q", r.Key())
	}
}

// TestCapabilitiesFollowSource: an archive reports its source's locality,
// request limit and coalescing knobs: local on disk and in memory, S3's
// limit and knobs on S3 (and so the pipeline reads each as it reads its
// source).
func TestCapabilitiesFollowSource(t *testing.T) {
	arch := gozarrZip(t, map[string][]byte{"zarr.json": []byte("{}")})
	for _, kind := range []string{"mem", "fs", "s3-fake"} {
		src := put(t, kind, arch)
		sc, zc := store.CapabilitiesOf(src), store.CapabilitiesOf(open(t, src))
		if zc.Local != sc.Local || zc.MaxConcurrency != sc.MaxConcurrency || zc.Coalesce != sc.Coalesce || zc.Into == nil || zc.Ranges == nil {
			t.Errorf("%s: archive capabilities %+v, source's %+v", kind, zc, sc)
		}
		if (kind == "s3-fake") == zc.Local {
			t.Errorf("%s: archive Local = %v", kind, zc.Local)
		}
		// Identity: two Readers of one archive are one store's data, named
		// after the source and key, not an address.
		a, b := open(t, src), open(t, src)
		if id := store.IDOf(a); id != store.IDOf(b) || id != "zip:"+store.IDOf(src)+"#"+a.Key() {
			t.Errorf("%s: IDOf = %q and %q, want zip:%s#%s", kind, id, store.IDOf(b), store.IDOf(src), a.Key())
		}
	}
}
