package npy

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
)

const refdata = "../../testdata/refdata"

// TestReadRefdata reads every .npy of the reference corpus (written by
// numpy 2.4), checks it against manifest.json, and checks that WriteHeader
// reproduces numpy's header byte for byte.
func TestReadRefdata(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join(refdata, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var manifest struct {
		Cases []struct {
			Name, Expected string
			Shape          []int
			NumpyDtype     string `json:"numpy_dtype"`
		}
	}
	if err := json.Unmarshal(raw, &manifest); err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob(filepath.Join(refdata, "*.npy"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 150 {
		t.Fatalf("only %d .npy files in %s", len(files), refdata)
	}
	byFile := map[string]int{}
	for i, c := range manifest.Cases {
		byFile[c.Expected] = i
	}
	for _, path := range files {
		i, ok := byFile[filepath.Base(path)]
		if !ok {
			t.Errorf("%s: not in manifest.json", path)
			continue
		}
		c := manifest.Cases[i]
		a, err := ReadFile(path)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if !slices.Equal(a.Shape, c.Shape) || a.Shape == nil {
			t.Errorf("%s: shape %v, manifest %v", c.Name, a.Shape, c.Shape)
		}
		if a.Descr != c.NumpyDtype || a.FortranOrder {
			t.Errorf("%s: descr %q fortran %v, manifest %q", c.Name, a.Descr, a.FortranOrder, c.NumpyDtype)
		}
		isz, err := ItemSize(a.Descr)
		if err != nil {
			t.Errorf("%s: %v", c.Name, err)
			continue
		}
		if len(a.Data) != a.NumElements()*isz {
			t.Errorf("%s: %d data bytes, want %d", c.Name, len(a.Data), a.NumElements()*isz)
		}
		file, _ := os.ReadFile(path)
		var h bytes.Buffer
		if err := WriteHeader(&h, a.Descr, a.Shape); err != nil {
			t.Errorf("%s: WriteHeader: %v", c.Name, err)
		} else if !bytes.Equal(h.Bytes(), file[:len(file)-len(a.Data)]) {
			t.Errorf("%s: header differs from numpy's:\n got %q\nwant %q", c.Name, h.Bytes(), file[:len(file)-len(a.Data)])
		}
	}
}

// TestHeaderLiterals checks written headers against literals worked out
// from the format spec and numpy's writer: the dict, 21 - len(str(shape[0]))
// growth spaces, then spaces and a newline up to a multiple of 64 bytes.
func TestHeaderLiterals(t *testing.T) {
	pad := func(dict string) string {
		n := 10 + len(dict) + 1
		return dict + strings.Repeat(" ", 64-n%64) + "\n"
	}
	cases := []struct {
		descr string
		shape []int
		dict  string
	}{
		{"<f4", []int{3, 4}, "{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }" + strings.Repeat(" ", 20)},
		{"|b1", []int{5}, "{'descr': '|b1', 'fortran_order': False, 'shape': (5,), }" + strings.Repeat(" ", 20)},
		{"<f8", []int{}, "{'descr': '<f8', 'fortran_order': False, 'shape': (), }"},
		{">c16", []int{1000, 2, 3}, "{'descr': '>c16', 'fortran_order': False, 'shape': (1000, 2, 3), }" + strings.Repeat(" ", 17)},
		{"<i8", []int{0}, "{'descr': '<i8', 'fortran_order': False, 'shape': (0,), }" + strings.Repeat(" ", 20)},
		{"<u2", []int{1234567890, 0}, "{'descr': '<u2', 'fortran_order': False, 'shape': (1234567890, 0), }" + strings.Repeat(" ", 11)},
	}
	for _, c := range cases {
		var b bytes.Buffer
		if err := WriteHeader(&b, c.descr, c.shape); err != nil {
			t.Fatal(err)
		}
		got := b.Bytes()
		want := pad(c.dict)
		if len(got) < 10 || !bytes.Equal(got[:8], []byte("\x93NUMPY\x01\x00")) ||
			int(binary.LittleEndian.Uint16(got[8:10])) != len(want) || string(got[10:]) != want {
			t.Errorf("%s %v:\n got %q\nwant %q", c.descr, c.shape, got, want)
		}
		if len(got)%64 != 0 {
			t.Errorf("%s %v: header of %d bytes", c.descr, c.shape, len(got))
		}
	}
	// The (3, 4) float32 header in full, as numpy 2 writes it.
	var b bytes.Buffer
	if err := WriteHeader(&b, "<f4", []int{3, 4}); err != nil {
		t.Fatal(err)
	}
	want := "\x93NUMPY\x01\x00v\x00{'descr': '<f4', 'fortran_order': False, 'shape': (3, 4), }" + strings.Repeat(" ", 58) + "\n"
	if b.String() != want {
		t.Errorf("got %q\nwant %q", b.String(), want)
	}
}

func TestRoundTrip(t *testing.T) {
	cases := []struct {
		descr string
		shape []int
	}{
		{"<f4", []int{3, 4}}, {"|u1", []int{7}}, {"<c8", []int{}}, {">i2", []int{2, 0, 5}},
		{"|S3", []int{2, 2}}, {"<U2", []int{3}}, {"<M8[ns]", []int{2}}, {"|V5", []int{1, 1, 1, 1}},
	}
	for _, c := range cases {
		isz, err := ItemSize(c.descr)
		if err != nil {
			t.Fatal(err)
		}
		n := isz
		for _, s := range c.shape {
			n *= s
		}
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i*7 + 1)
		}
		var b bytes.Buffer
		if err := Write(&b, c.descr, c.shape, data); err != nil {
			t.Fatal(err)
		}
		b.WriteString("trailing") // Read stops after the data
		a, err := Read(&b)
		if err != nil {
			t.Fatalf("%s %v: %v", c.descr, c.shape, err)
		}
		if a.Descr != c.descr || !slices.Equal(a.Shape, c.shape) || !bytes.Equal(a.Data, data) || a.FortranOrder {
			t.Errorf("%s %v: read back %+v", c.descr, c.shape, a)
		}
		if b.String() != "trailing" {
			t.Errorf("%s %v: Read consumed %q", c.descr, c.shape, b.String())
		}
	}
	path := filepath.Join(t.TempDir(), "a.npy")
	if err := WriteFile(path, "<i4", []int{2}, []byte{1, 0, 0, 0, 2, 0, 0, 0}); err != nil {
		t.Fatal(err)
	}
	a, err := ReadFile(path)
	if err != nil || !slices.Equal(a.Shape, []int{2}) || a.Data[4] != 2 {
		t.Fatalf("%+v %v", a, err)
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.Write([]byte{0})
	f.Close()
	if _, err := ReadFile(path); !errors.Is(err, ErrFormat) {
		t.Fatalf("trailing byte: %v", err)
	}
}

func TestWriteErrors(t *testing.T) {
	cases := []struct {
		descr string
		shape []int
		data  int
	}{
		{"<f4", []int{2}, 4},                                // short data
		{"<f4", []int{-1}, 0},                               // negative dim
		{"<x4", []int{1}, 4},                                // unknown kind
		{"=f4", []int{1}, 4},                                // native order is not a descr numpy writes
		{"f4", []int{1}, 4},                                 // nor is no order at all
		{"|O", []int{1}, 8},                                 // objects
		{"<f4", make([]int, 65), 0},                         // too many dims
		{"<f0", []int{1}, 0},                                // zero item size
		{"<f'4", []int{1}, 4},                               // quote
		{"<f8", []int{math.MaxInt / 2, math.MaxInt / 2}, 0}, // overflow
	}
	for _, c := range cases {
		err := Write(io.Discard, c.descr, c.shape, make([]byte, c.data))
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Write(%q, %v, %d bytes) = %v, want ErrInvalid", c.descr, c.shape, c.data, err)
		}
	}
}

// hdr builds a file with the given version and header dict.
func hdr(major byte, dict string, data string) []byte {
	b := append([]byte("\x93NUMPY"), major, 0)
	if major == 1 {
		b = binary.LittleEndian.AppendUint16(b, uint16(len(dict)))
	} else {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(dict)))
	}
	return append(append(b, dict...), data...)
}

func TestReadVersions(t *testing.T) {
	for _, v := range []byte{1, 2, 3} {
		f := hdr(v, "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 1), }\n", "\x01\x00\x02\x00")
		a, err := Read(bytes.NewReader(f))
		if err != nil {
			t.Fatalf("v%d: %v", v, err)
		}
		if a.Descr != "<i2" || !a.FortranOrder || !slices.Equal(a.Shape, []int{2, 1}) || !bytes.Equal(a.Data, []byte{1, 0, 2, 0}) {
			t.Fatalf("v%d: %+v", v, a)
		}
	}
	// Older writers: Python 2 longs, u'' strings, double quotes, key order.
	f := hdr(1, `{"shape": (3L,), u'fortran_order': False, 'descr': u"|u1"}`, "abc")
	a, err := Read(bytes.NewReader(f))
	if err != nil || a.Descr != "|u1" || !slices.Equal(a.Shape, []int{3}) || string(a.Data) != "abc" {
		t.Fatalf("%+v %v", a, err)
	}
}

func TestReadErrors(t *testing.T) {
	ok := "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }"
	cases := []struct {
		name string
		file []byte
		err  error
	}{
		{"empty", nil, ErrFormat},
		{"bad magic", []byte("\x93NUMPZ\x01\x00\x00\x00"), ErrFormat},
		{"version 4", hdr(4, ok, "abcd"), ErrUnsupported},
		{"minor 1", append([]byte("\x93NUMPY\x01\x01"), hdr(1, ok, "abcd")[8:]...), ErrUnsupported},
		{"truncated length", []byte("\x93NUMPY\x01\x00\x05"), ErrFormat},
		{"truncated header", hdr(1, ok, "")[:30], ErrFormat},
		{"huge header", []byte("\x93NUMPY\x02\x00\xff\xff\xff\x7f{"), ErrFormat},
		{"short data", hdr(1, ok, "abc"), ErrFormat},
		{"structured", hdr(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,), }", "abcd"), ErrUnsupported},
		{"object", hdr(1, "{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", "abcdefgh"), ErrUnsupported},
		{"missing key", hdr(1, "{'descr': '<f4', 'shape': (1,), }", "abcd"), ErrFormat},
		{"extra key", hdr(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", "abcd"), ErrFormat},
		{"repeated key", hdr(1, "{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", "abcd"), ErrFormat},
		{"negative dim", hdr(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", ""), ErrFormat},
		{"shape not tuple", hdr(1, "{'descr': '<f4', 'fortran_order': False, 'shape': 1, }", "abcd"), ErrFormat},
		{"parenthesised int", hdr(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (1), }", "abcd"), ErrFormat},
		{"bool dim", hdr(1, "{'descr': '<f4', 'fortran_order': False, 'shape': (True,), }", "abcd"), ErrFormat},
		{"fortran not bool", hdr(1, "{'descr': '<f4', 'fortran_order': 0, 'shape': (1,), }", "abcd"), ErrFormat},
		{"overflow", hdr(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", ""), ErrFormat},
		{"int too large", hdr(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }", ""), ErrFormat},
		{"65 dims", hdr(1, "{'descr': '<f8', 'fortran_order': False, 'shape': ("+strings.Repeat("1,", 65)+"), }", ""), ErrFormat},
		{"unterminated", hdr(1, "{'descr': '<f4", ""), ErrFormat},
		{"trailing text", hdr(1, ok+" x", "abcd"), ErrFormat},
		{"deep nesting", hdr(1, strings.Repeat("[", 100), ""), ErrFormat},
		{"not a dict", hdr(1, "(1,)", ""), ErrFormat},
		{"bad descr", hdr(1, "{'descr': 'zz', 'fortran_order': False, 'shape': (1,), }", "abcd"), ErrUnsupported},
	}
	for _, c := range cases {
		_, err := Read(bytes.NewReader(c.file))
		if !errors.Is(err, c.err) {
			t.Errorf("%s: err = %v, want %v", c.name, err, c.err)
		}
	}
}

// TestReadHugePromise checks that a header promising far more data than
// the input holds fails without allocating what it promises.
func TestReadHugePromise(t *testing.T) {
	f := hdr(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }", "12345678")
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Read(bytes.NewReader(f))
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrFormat) {
		t.Fatalf("err = %v", err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 8<<20 {
		t.Fatalf("allocated %d bytes for an 8-byte input", d)
	}
}

func TestItemSize(t *testing.T) {
	cases := map[string]int{
		"<f4": 4, "|b1": 1, ">c16": 16, "<U10": 40, "|S5": 5, "<M8[ns]": 8, "<m8": 8, "i8": 8, "|V3": 3,
		"": -1, "<": -1, "<f": -1, "<f-4": -1, "<f+4": -1, "<M8[": -1, "<M8[]": -1, "<q8": -1, "|O": -1, "<f4x": -1,
	}
	for descr, want := range cases {
		got, err := ItemSize(descr)
		if want < 0 {
			if !errors.Is(err, ErrUnsupported) {
				t.Errorf("ItemSize(%q) = %d, %v; want ErrUnsupported", descr, got, err)
			}
		} else if err != nil || got != want {
			t.Errorf("ItemSize(%q) = %d, %v; want %d", descr, got, err, want)
		}
	}
}

func FuzzRead(f *testing.F) {
	var b bytes.Buffer
	Write(&b, "<f4", []int{2, 1}, []byte("abcdefgh"))
	f.Add(b.Bytes())
	f.Add(hdr(2, "{'descr': '<i2', 'fortran_order': True, 'shape': (2, 1), }\n", "\x01\x00\x02\x00"))
	f.Add(hdr(3, `{"shape": (3L,), u'fortran_order': False, 'descr': u"|u1"}`, "abc"))
	f.Add(hdr(1, "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (), }", "abcd"))
	f.Add([]byte("\x93NUMPY\x01\x00"))
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := Read(bytes.NewReader(data))
		if err != nil {
			return
		}
		isz, err := ItemSize(a.Descr)
		if err != nil {
			t.Fatalf("accepted descr %q: %v", a.Descr, err)
		}
		if len(a.Data) != a.NumElements()*isz {
			t.Fatalf("%d data bytes for shape %v of %q", len(a.Data), a.Shape, a.Descr)
		}
		if a.FortranOrder {
			return
		}
		// What was read writes back and reads back the same.
		var out bytes.Buffer
		if err := Write(&out, a.Descr, a.Shape, a.Data); err != nil {
			if a.Descr[0] == '=' || !strings.ContainsAny(a.Descr[:1], "<>|") {
				return // descr without explicit order: the writer refuses it
			}
			t.Fatalf("write back %q %v: %v", a.Descr, a.Shape, err)
		}
		b, err := Read(&out)
		if err != nil || b.Descr != a.Descr || !slices.Equal(b.Shape, a.Shape) || !bytes.Equal(b.Data, a.Data) {
			t.Fatalf("round trip: %+v %v", b, err)
		}
	})
}

// FuzzWrite writes arbitrary descrs, shapes and data: Write refuses what
// it cannot write with ErrInvalid before writing anything (a descr without
// an explicit byte order among them, as WriteHeader documents), and what
// it writes is a version 1.0 file with a header of a multiple of 64 bytes
// that Read returns exactly, leaving bytes after the data unread.
func FuzzWrite(f *testing.F) {
	f.Add("<f4", []byte{3, 0, 4, 0}, []byte("forty-eight bytes of data, forty-eight bytes ..."))
	f.Add("|u1", []byte{7, 0}, []byte("seven!!"))
	f.Add(">c16", []byte{}, []byte("sixteen bytes ok"))
	f.Add("<M8[ns]", []byte{2, 0}, []byte("two datetimes..."))
	f.Add("|S3", []byte{0, 0, 0xff, 0xff}, []byte{})
	f.Add("<U2", []byte{1, 0}, []byte("eight by"))
	f.Add("f4", []byte{1, 0}, []byte("abcd"))
	f.Add("=i8", []byte{1, 0}, []byte("12345678"))
	f.Add("<f'4", []byte{1, 0}, []byte("abcd"))
	f.Add("|O", []byte{1, 0}, []byte("12345678"))
	f.Fuzz(func(t *testing.T, descr string, shapeB, data []byte) {
		shape := make([]int, len(shapeB)/2)
		for i := range shape {
			shape[i] = int(binary.LittleEndian.Uint16(shapeB[2*i:]))
		}
		var b bytes.Buffer
		err := Write(&b, descr, shape, data)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("Write(%q, %v, %d bytes): %v, want ErrInvalid", descr, shape, len(data), err)
			}
			if b.Len() != 0 {
				t.Fatalf("failed Write wrote %d bytes", b.Len())
			}
			return
		}
		if descr == "" || !strings.ContainsRune("<>|", rune(descr[0])) {
			t.Fatalf("Write accepted descr %q, which has no explicit byte order", descr)
		}
		file := b.Bytes()
		hlen := bytes.IndexByte(file, '\n') + 1
		if !bytes.HasPrefix(file, []byte("\x93NUMPY\x01\x00")) || hlen%64 != 0 || len(file) != hlen+len(data) {
			t.Fatalf("file of %d bytes, header %d: % x", len(file), hlen, file[:min(len(file), 16)])
		}
		b.WriteString("after")
		a, err := Read(&b)
		if err != nil {
			t.Fatalf("Read of what Write wrote (%q %v): %v", descr, shape, err)
		}
		if a.Descr != descr || !slices.Equal(a.Shape, shape) || !bytes.Equal(a.Data, data) || a.FortranOrder {
			t.Fatalf("read back %q %v %d bytes fortran %v, wrote %q %v %d bytes", a.Descr, a.Shape, len(a.Data), a.FortranOrder, descr, shape, len(data))
		}
		if b.String() != "after" {
			t.Fatalf("Read consumed %q past the data", b.String())
		}
	})
}

// TestReadOverOneMiB: data sections past the 1 MiB read step read whole,
// and Read leaves the bytes after them unread (it used to read past the
// promised size when the buffer's capacity exceeded it, and refuse every
// file over 1 MiB: "data section has 1048592 bytes, header promises
// 1048592").
func TestReadOverOneMiB(t *testing.T) {
	for _, n := range []int{1<<20 + 16, 3<<20 + 5, 1 << 22} {
		var buf bytes.Buffer
		if err := WriteHeader(&buf, "|u1", []int{n}); err != nil {
			t.Fatal(err)
		}
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i * 7)
		}
		buf.Write(data)
		file := filepath.Join(t.TempDir(), "big.npy")
		if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		buf.WriteString("TRAILER")
		r := bytes.NewReader(buf.Bytes())
		a, err := Read(r)
		if err != nil || !bytes.Equal(a.Data, data) {
			t.Fatalf("Read of %d bytes: %v", n, err)
		}
		if rest, _ := io.ReadAll(r); string(rest) != "TRAILER" {
			t.Errorf("Read of %d bytes consumed past the data: %q left", n, rest)
		}
		if a, err := ReadFile(file); err != nil || !bytes.Equal(a.Data, data) {
			t.Fatalf("ReadFile of %d bytes: %v", n, err)
		}
	}
}

// TestReadFileHeader: the header alone, and where the data starts (the
// file's bytes from there are the data), checked as ReadFile checks a
// file: trailing bytes and a short data section are ErrFormat.
func TestReadFileHeader(t *testing.T) {
	dir := t.TempDir()
	data := []byte{1, 0, 2, 0, 3, 0, 4, 0, 5, 0, 6, 0}
	file := filepath.Join(dir, "a.npy")
	if err := WriteFile(file, "<i2", []int{2, 3}, data); err != nil {
		t.Fatal(err)
	}
	a, off, err := ReadFileHeader(file)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(file)
	if a.Descr != "<i2" || a.FortranOrder || len(a.Shape) != 2 || a.Shape[0] != 2 || a.Shape[1] != 3 || a.Data != nil || !bytes.Equal(b[off:], data) {
		t.Fatalf("ReadFileHeader: %+v, offset %d", a, off)
	}
	for name, content := range map[string][]byte{"long.npy": append(slices.Clone(b), 0), "short.npy": b[:len(b)-1]} {
		p := filepath.Join(dir, name)
		os.WriteFile(p, content, 0o644)
		if _, _, err := ReadFileHeader(p); !errors.Is(err, ErrFormat) {
			t.Errorf("%s: %v, want ErrFormat", name, err)
		}
	}
	if _, _, err := ReadFileHeader(filepath.Join(dir, "missing.npy")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
}
