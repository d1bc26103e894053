package parquet

import (
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"testing"
)

// thrift builds Thrift compact bytes for the tests.
type thrift []byte

func (t thrift) field(delta, typ byte) thrift { return append(t, delta<<4|typ) }
func (t thrift) int(v int64) thrift           { return binary.AppendUvarint(t, uint64(v<<1^v>>63)) }
func (t thrift) stop() thrift                 { return append(t, 0) }
func (t thrift) list(n int, typ byte) thrift {
	if n < 15 {
		return append(t, byte(n)<<4|typ)
	}
	return binary.AppendUvarint(append(t, 15<<4|typ), uint64(n))
}

// file returns a Parquet file of one page header and a footer naming it.
func file(page, footer thrift) []byte {
	b := append([]byte("PAR1"), page...)
	b = append(b, footer...)
	b = binary.LittleEndian.AppendUint32(b, uint32(len(footer)))
	return append(b, "PAR1"...)
}

// footer: num_rows, one row group of one column chunk at offset 4 of
// compressed bytes.
func footer(rows, compressed int64) thrift {
	var f thrift
	f = f.field(3, tI64).int(rows)
	f = f.field(1, tList).list(1, tStruct)           // row_groups
	f = f.field(1, tList).list(1, tStruct)           // columns
	f = f.field(3, tStruct)                          // meta_data
	f = f.field(7, tI64).int(compressed)             // total_compressed_size
	f = f.field(2, tI64).int(4).stop().stop().stop() // data_page_offset; ends meta_data, chunk, row group
	return f.stop()
}

func page(size, csize, values int64) thrift {
	var p thrift
	p = p.field(1, tI32).int(0).field(1, tI32).int(size).field(1, tI32).int(csize)
	p = p.field(2, tStruct).field(1, tI32).int(values).stop()
	return p.stop()
}

// TestCheckFileHostile: declared sizes beyond the file or the limits are
// ErrInvalid before parquet-go sees the file.
func TestCheckFileHostile(t *testing.T) {
	ok := page(10, 0, 3)
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"valid structure", file(ok, footer(3, int64(len(ok)))), ""},
		{"footer of 4 GiB", append(append([]byte("PAR1"), make([]byte, 8)...), 0xff, 0xff, 0xff, 0xff, 'P', 'A', 'R', '1'), "footer of"},
		{"no magic", []byte("PAR0xxxxxxxxxxxxPAR1"), "not a Parquet file"},
		{"too many rows", file(ok, footer(1000, int64(len(ok)))), "rows"},
		{"page of 1 GiB", file(page(1<<30, 0, 1), footer(3, int64(len(page(1<<30, 0, 1))))), "page of"},
		{"page past the chunk", file(page(10, 1<<20, 1), footer(3, int64(len(page(10, 1<<20, 1))))), "left"},
		{"page of 2^31 values", file(page(10, 0, 1<<31), footer(3, int64(len(page(10, 0, 1<<31))))), "values"},
		{"chunk past the file", file(ok, footer(3, 1<<40)), "outside the file"},
		{"list of 2^30 row groups", file(ok, thrift{}.field(4, tList).list(1<<30, tStruct).stop()), "elements"},
		{"deep nesting", file(ok, thrift(strings.Repeat("\x1c", 40))), "nested"},
	} {
		err := checkFile(c.b, 4)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != "" && (!errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want ErrInvalid with %q", c.name, err, c.want)
		}
	}
}

// TestMutatedRefsFiles: random byte changes of kerchunk's own refs file
// are read or refused quickly and with little memory (before checkFile,
// some made parquet-go allocate gigabytes or spin).
func TestMutatedRefsFiles(t *testing.T) {
	seed, err := os.ReadFile("../../../testdata/virtual/kerchunk_sub.parq/zlib_shuffle/refs.0.parq")
	if err != nil {
		t.Fatal(err)
	}
	if err := checkFile(seed, 4); err != nil {
		t.Fatalf("kerchunk's file: %v", err)
	}
	rounds := 2000
	if testing.Short() {
		rounds = 300
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range rounds {
		b := append([]byte(nil), seed...)
		for range 1 + r.IntN(4) {
			b[r.IntN(len(b))] = byte(r.Uint32())
		}
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		readRows(b, 4)
		runtime.ReadMemStats(&m1)
		if d := m1.TotalAlloc - m0.TotalAlloc; d > 64<<20 {
			t.Errorf("mutation %d: %d MiB allocated", i, d>>20)
		}
	}
}
