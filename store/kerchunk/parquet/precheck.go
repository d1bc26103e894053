package parquet

// A bounded check of a refs file's structure before parquet-go opens it:
// parquet-go trusts the sizes a file declares (a footer length of 4 GiB in
// a 1 KiB file, list lengths up to 2^31, page sizes), so a hostile file
// made it allocate gigabytes or spin. checkFile walks the footer's Thrift
// compact encoding (https://github.com/apache/thrift/blob/master/doc/specs/thrift-compact-protocol.md)
// and every page header the footer's column chunks point to, and refuses
// what is out of bounds; only then is the file handed to parquet-go.
// Layout (https://parquet.apache.org/docs/file-format/): "PAR1", column
// chunks of pages (each a Thrift PageHeader and its bytes), the footer
// (Thrift FileMetaData), its length (4 bytes little-endian), "PAR1".

import (
	"encoding/binary"
	"fmt"
)

// Limits of checkFile.
const (
	// maxFooterBytes bounds the footer (kerchunk's are about 1 KiB).
	maxFooterBytes = 256 << 10
	// maxListElements bounds the list elements of a footer, all lists
	// together (parquet-go allocates a struct per element).
	maxListElements = 1 << 14
	// maxPageBytes bounds a page's decoded size, maxDecodedBytes the
	// pages of a file together.
	maxPageBytes    = 256 << 20
	maxDecodedBytes = 1 << 30
	thriftMaxDepth  = 16
)

// Thrift compact protocol types.
const (
	tStop   = 0
	tTrue   = 1
	tFalse  = 2
	tByte   = 3
	tI16    = 4
	tI32    = 5
	tI64    = 6
	tDouble = 7
	tBinary = 8
	tList   = 9
	tSet    = 10
	tMap    = 11
	tStruct = 12
)

// thriftReader reads Thrift compact values from b, within limits.
type thriftReader struct {
	b        []byte
	pos      int
	elements int // list, set and map elements seen
}

func (r *thriftReader) fail(format string, args ...any) error {
	return fmt.Errorf("%w: Parquet metadata at byte %d: %s", ErrInvalid, r.pos, fmt.Sprintf(format, args...))
}

func (r *thriftReader) byte() (byte, error) {
	if r.pos >= len(r.b) {
		return 0, r.fail("truncated")
	}
	c := r.b[r.pos]
	r.pos++
	return c, nil
}

func (r *thriftReader) uvarint() (uint64, error) {
	v, n := binary.Uvarint(r.b[r.pos:])
	if n <= 0 {
		return 0, r.fail("bad varint")
	}
	r.pos += n
	return v, nil
}

func (r *thriftReader) varint() (int64, error) {
	u, err := r.uvarint()
	return int64(u>>1) ^ -int64(u&1), err
}

// count reads a collection size and checks it against the bytes left
// (every element takes one at least) and the element budget.
func (r *thriftReader) count(n uint64) (int, error) {
	if n > uint64(len(r.b)-r.pos) {
		return 0, r.fail("%d elements in %d bytes", n, len(r.b)-r.pos)
	}
	r.elements += int(n)
	if r.elements > maxListElements {
		return 0, r.fail("more than %d list elements", maxListElements)
	}
	return int(n), nil
}

// skip skips a value of type t.
func (r *thriftReader) skip(t byte, depth int) error {
	if depth > thriftMaxDepth {
		return r.fail("nested deeper than %d", thriftMaxDepth)
	}
	switch t {
	case tTrue, tFalse:
		return nil
	case tByte:
		_, err := r.byte()
		return err
	case tI16, tI32, tI64:
		_, err := r.uvarint()
		return err
	case tDouble:
		if len(r.b)-r.pos < 8 {
			return r.fail("truncated")
		}
		r.pos += 8
		return nil
	case tBinary:
		n, err := r.uvarint()
		if err != nil {
			return err
		}
		if n > uint64(len(r.b)-r.pos) {
			return r.fail("a %d-byte string in %d bytes", n, len(r.b)-r.pos)
		}
		r.pos += int(n)
		return nil
	case tList, tSet:
		return r.list(depth, func(et byte) error { return r.skip(et, depth+1) })
	case tMap:
		n, err := r.uvarint()
		if err != nil {
			return err
		}
		if n == 0 {
			return nil
		}
		kv, err := r.byte()
		if err != nil {
			return err
		}
		c, err := r.count(n)
		if err != nil {
			return err
		}
		for range c {
			if err := r.skip(kv>>4, depth+1); err != nil {
				return err
			}
			if err := r.skip(kv&15, depth+1); err != nil {
				return err
			}
		}
		return nil
	case tStruct:
		return r.fields(depth, func(int16, byte) (bool, error) { return false, nil })
	}
	return r.fail("unknown type %d", t)
}

// list reads a list header and calls elem for each element.
func (r *thriftReader) list(depth int, elem func(et byte) error) error {
	h, err := r.byte()
	if err != nil {
		return err
	}
	n := uint64(h >> 4)
	if n == 15 {
		if n, err = r.uvarint(); err != nil {
			return err
		}
	}
	c, err := r.count(n)
	if err != nil {
		return err
	}
	for range c {
		if err := elem(h & 15); err != nil {
			return err
		}
	}
	return nil
}

// fields reads a struct's fields, calling field for each; a field it
// does not consume (false) is skipped.
func (r *thriftReader) fields(depth int, field func(id int16, t byte) (bool, error)) error {
	if depth > thriftMaxDepth {
		return r.fail("nested deeper than %d", thriftMaxDepth)
	}
	var id int16
	for {
		h, err := r.byte()
		if err != nil {
			return err
		}
		t := h & 15
		if t == tStop {
			return nil
		}
		if d := h >> 4; d != 0 {
			id += int16(d)
		} else {
			v, err := r.varint()
			if err != nil {
				return err
			}
			id = int16(v)
		}
		done, err := field(id, t)
		if err != nil {
			return err
		}
		if !done {
			if err := r.skip(t, depth+1); err != nil {
				return err
			}
		}
	}
}

// i64 reads an integer field of type i16, i32 or i64.
func (r *thriftReader) int(t byte) (int64, error) {
	if t != tI16 && t != tI32 && t != tI64 {
		return 0, r.fail("an integer field of type %d", t)
	}
	return r.varint()
}

// chunkMeta is what checkFile needs of a column chunk.
type chunkMeta struct {
	dataOffset, dictOffset, compressed int64
	hasDict                            bool
}

// checkFile checks a refs file's footer and page headers against the file
// and the limits: at most maxRows rows, sizes and offsets inside the file.
func checkFile(b []byte, maxRows int) error {
	if len(b) < 12 || string(b[:4]) != "PAR1" || string(b[len(b)-4:]) != "PAR1" {
		return fmt.Errorf("%w: not a Parquet file (no PAR1 at both ends)", ErrInvalid)
	}
	n := int64(binary.LittleEndian.Uint32(b[len(b)-8:]))
	if n > int64(len(b)-12) || n > maxFooterBytes {
		return fmt.Errorf("%w: a footer of %d bytes in a %d-byte file (at most %d)", ErrInvalid, n, len(b), maxFooterBytes)
	}
	r := &thriftReader{b: b[len(b)-8-int(n) : len(b)-8]}
	var chunks []chunkMeta
	var rows int64
	err := r.fields(0, func(id int16, t byte) (bool, error) {
		switch {
		case id == 3 && t != tStruct: // num_rows
			v, err := r.int(t)
			rows = v
			return true, err
		case id == 4 && t == tList: // row_groups
			return true, r.list(1, func(et byte) error {
				if et != tStruct {
					return r.fail("a row group of type %d", et)
				}
				return r.fields(2, func(id int16, t byte) (bool, error) {
					if id != 1 || t != tList { // columns
						return false, nil
					}
					return true, r.list(3, func(et byte) error {
						if et != tStruct {
							return r.fail("a column chunk of type %d", et)
						}
						return r.fields(4, func(id int16, t byte) (bool, error) {
							if id != 3 || t != tStruct { // meta_data
								return false, nil
							}
							var c chunkMeta
							err := r.fields(5, func(id int16, t byte) (bool, error) {
								var err error
								switch id {
								case 7:
									c.compressed, err = r.int(t)
								case 9:
									c.dataOffset, err = r.int(t)
								case 11:
									c.dictOffset, err = r.int(t)
									c.hasDict = true
								default:
									return false, nil
								}
								return true, err
							})
							chunks = append(chunks, c)
							return true, err
						})
					})
				})
			})
		}
		return false, nil
	})
	if err != nil {
		return err
	}
	if rows < 0 || rows > int64(maxRows) {
		return fmt.Errorf("%w: %d rows, record_size is %d", ErrInvalid, rows, maxRows)
	}
	end := int64(len(b)) - 8 - n
	var decoded int64
	for _, c := range chunks {
		start := c.dataOffset
		if c.hasDict && c.dictOffset > 0 && c.dictOffset < start {
			start = c.dictOffset
		}
		if start < 4 || c.compressed < 0 || start > end || c.compressed > end-start {
			return fmt.Errorf("%w: a column chunk at %d of %d bytes, outside the file's %d bytes of data", ErrInvalid, start, c.compressed, end)
		}
		// The chunk's pages, one header and its bytes after another.
		pr := &thriftReader{b: b[:start+c.compressed], pos: int(start)}
		for pr.pos < len(pr.b) {
			var size, csize, values int64 = -1, -1, 0
			err := pr.fields(0, func(id int16, t byte) (bool, error) {
				var err error
				switch {
				case id == 2:
					size, err = pr.int(t)
				case id == 3:
					csize, err = pr.int(t)
				case (id == 5 || id == 7 || id == 8) && t == tStruct: // data, dictionary, data v2 headers
					err = pr.fields(1, func(id int16, t byte) (bool, error) {
						if id != 1 {
							return false, nil
						}
						v, err := pr.int(t)
						values = v
						return true, err
					})
				default:
					return false, nil
				}
				return true, err
			})
			if err != nil {
				return err
			}
			switch {
			case size < 0 || size > maxPageBytes:
				return fmt.Errorf("%w: a page of %d bytes decoded (at most %d)", ErrInvalid, size, maxPageBytes)
			case csize < 0 || csize > int64(len(pr.b)-pr.pos):
				return fmt.Errorf("%w: a page of %d bytes in a column chunk with %d left", ErrInvalid, csize, len(pr.b)-pr.pos)
			case values < 0 || values > int64(maxRows):
				return fmt.Errorf("%w: a page of %d values, record_size is %d", ErrInvalid, values, maxRows)
			}
			decoded += size
			if decoded > maxDecodedBytes {
				return fmt.Errorf("%w: pages of more than %d bytes decoded", ErrInvalid, maxDecodedBytes)
			}
			pr.pos += int(csize)
		}
	}
	return nil
}
