// Package refdata gives the tests of any gozarr package access to the
// reference corpus in testdata/refdata (written by zarr-python 3.4; see its
// README.md): the cases and groups of manifest.json, each case's files and
// its expected contents as a .npy array. It is test support: functions
// taking a testing.TB fail the test on a corpus that cannot be read.
//
// The corpus is located from this source file, so tests find it whatever
// package (working directory) they run in. The manifest is read once per
// process; everything here is safe for concurrent use, and the returned
// cases must be treated as read-only.
package refdata

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gozarr/gozarr/internal/npy"
)

// ErrCorpus reports a corpus that cannot be read or does not match its
// manifest.
var ErrCorpus = errors.New("refdata: bad reference corpus")

// Dir returns the absolute path of the corpus directory, testdata/refdata
// at the root of the module.
func Dir() string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		return filepath.Join("testdata", "refdata")
	}
	return filepath.Join(filepath.Dir(file), "..", "..", "testdata", "refdata")
}

// Case is one array case of manifest.json (see the corpus README for the
// meaning of each field). Fields the manifest keeps exactly as in the
// array metadata are raw JSON.
type Case struct {
	Name                string          `json:"name"`
	Category            string          `json:"category"`
	NodeType            string          `json:"node_type"`
	ZarrFormat          int             `json:"zarr_format"`
	Path                string          `json:"path"`     // the .zarr directory, slash-separated, relative to Dir
	Expected            string          `json:"expected"` // the .npy file, relative to Dir
	Shape               []int           `json:"shape"`
	DType               string          `json:"dtype"`       // v3 data_type, or v2 dtype string
	NumpyDType          string          `json:"numpy_dtype"` // descr of the .npy (little-endian)
	ChunkShape          []int           `json:"chunk_shape"` // read-chunk shape (innermost for sharded arrays)
	ShardShape          []int           `json:"shard_shape"` // chunk-grid shape of a sharded array, else nil
	NestedChunkShapes   [][]int         `json:"nested_chunk_shapes"`
	Codecs              json.RawMessage `json:"codecs"` // v3 codecs list, or v2 {filters, compressor, order}
	FillValue           json.RawMessage `json:"fill_value"`
	ChunkKeyEncoding    json.RawMessage `json:"chunk_key_encoding"`  // v3 only
	DimensionSeparator  string          `json:"dimension_separator"` // v2 only
	DimensionNames      []*string       `json:"dimension_names"`
	Attributes          json.RawMessage `json:"attributes"`
	ChunkObjectsTotal   int             `json:"chunk_objects_total"`
	ChunkObjectsPresent int             `json:"chunk_objects_present"`
	WriteCalls          int             `json:"write_calls"`
	StoredBytes         int64           `json:"stored_bytes"`
	Tags                []string        `json:"tags"`
	Notes               string          `json:"notes"`
	Group               string          `json:"group"` // for arrays inside a hierarchy

	keyPrefix, keySep string // chunk keys: keyPrefix + indices joined by keySep
}

// Group is one hierarchy of manifest.json.
type Group struct {
	Name       string `json:"name"`
	ZarrFormat int    `json:"zarr_format"`
	Path       string `json:"path"`
	Notes      string `json:"notes"`
	Nodes      []Node `json:"nodes"`
}

// Node is one node of a Group: a group with its attributes, or an array
// naming its Case.
type Node struct {
	Path       string          `json:"path"` // "" for the root
	NodeType   string          `json:"node_type"`
	Attributes json.RawMessage `json:"attributes"`
	Case       string          `json:"case"`
}

// Manifest is the parsed manifest.json.
type Manifest struct {
	Cases  []Case  `json:"cases"`
	Groups []Group `json:"groups"`
}

var loaded struct {
	once sync.Once
	m    *Manifest
	err  error
}

// Load returns the manifest, read and parsed on the first call. An
// unreadable or empty manifest is an error wrapping ErrCorpus.
func Load() (*Manifest, error) {
	loaded.once.Do(func() { loaded.m, loaded.err = load() })
	return loaded.m, loaded.err
}

func load() (*Manifest, error) {
	path := filepath.Join(Dir(), "manifest.json")
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorpus, err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("%w: %s: %w", ErrCorpus, path, err)
	}
	if len(m.Cases) == 0 {
		return nil, fmt.Errorf("%w: %s lists no cases", ErrCorpus, path)
	}
	for i := range m.Cases {
		if err := m.Cases[i].initKeys(); err != nil {
			return nil, err
		}
	}
	return &m, nil
}

// Cases returns every case of the manifest, failing t if it cannot be read.
func Cases(t testing.TB) []Case {
	t.Helper()
	m, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return m.Cases
}

// Groups returns every group of the manifest, failing t if it cannot be
// read.
func Groups(t testing.TB) []Group {
	t.Helper()
	m, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return m.Groups
}

// Lookup returns the case called name, failing t if there is none.
func Lookup(t testing.TB, name string) Case {
	t.Helper()
	for _, c := range Cases(t) {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("refdata: no case %q", name)
	return Case{}
}

// HasTag reports whether c carries tag (for instance "codec:sharding").
func (c Case) HasTag(tag string) bool { return slices.Contains(c.Tags, tag) }

// Dir returns the absolute path of c's .zarr directory.
func (c Case) Dir() string { return filepath.Join(Dir(), filepath.FromSlash(c.Path)) }

// File returns the absolute path of the file at key (slash-separated)
// inside c's .zarr directory.
func (c Case) File(key string) string { return filepath.Join(c.Dir(), filepath.FromSlash(key)) }

// ExpectedFile returns the absolute path of c's .npy file.
func (c Case) ExpectedFile() string { return filepath.Join(Dir(), c.Expected) }

// GridChunkShape returns the shape of the objects of c's chunk grid: the
// shard shape of a sharded array, else the chunk shape.
func (c Case) GridChunkShape() []int {
	if c.ShardShape != nil {
		return c.ShardShape
	}
	return c.ChunkShape
}

// ChunkKey returns the store key of the grid object (chunk or shard) at
// grid index idx, following c's chunk key encoding ("default": "c/1/2",
// "v2" and Zarr v2 arrays: "1.2", "0" for a 0-d array).
func (c Case) ChunkKey(idx []int) string {
	if len(idx) == 0 {
		if c.keyPrefix == "" {
			return "0"
		}
		return c.keyPrefix
	}
	var b strings.Builder
	b.WriteString(c.keyPrefix)
	for i, x := range idx {
		if i > 0 || c.keyPrefix != "" {
			b.WriteString(c.keySep)
		}
		b.WriteString(strconv.Itoa(x))
	}
	return b.String()
}

// initKeys derives the chunk key scheme from the metadata fields.
func (c *Case) initKeys() error {
	if c.ZarrFormat == 2 {
		c.keySep = cmpOr(c.DimensionSeparator, ".")
		return nil
	}
	var e struct {
		Name          string `json:"name"`
		Configuration struct {
			Separator string `json:"separator"`
		} `json:"configuration"`
	}
	if len(c.ChunkKeyEncoding) > 0 {
		if err := json.Unmarshal(c.ChunkKeyEncoding, &e); err != nil {
			return fmt.Errorf("%w: case %s: chunk_key_encoding: %w", ErrCorpus, c.Name, err)
		}
	}
	switch e.Name {
	case "default", "":
		c.keyPrefix, c.keySep = "c", cmpOr(e.Configuration.Separator, "/")
	case "v2":
		c.keySep = cmpOr(e.Configuration.Separator, ".")
	default:
		return fmt.Errorf("%w: case %s: chunk key encoding %q", ErrCorpus, c.Name, e.Name)
	}
	return nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// ReadExpected reads c's .npy file and checks it against the manifest: C
// order, c.NumpyDType and c.Shape. Errors wrap ErrCorpus (or the file
// system's and package npy's errors).
func (c Case) ReadExpected() (*npy.Array, error) {
	a, err := npy.ReadFile(c.ExpectedFile())
	if err != nil {
		return nil, fmt.Errorf("case %s: %w", c.Name, err)
	}
	if a.FortranOrder || a.Descr != c.NumpyDType || !slices.Equal(a.Shape, c.Shape) {
		return nil, fmt.Errorf("%w: case %s: %s holds %q fortran %v shape %v; manifest %q shape %v",
			ErrCorpus, c.Name, c.Expected, a.Descr, a.FortranOrder, a.Shape, c.NumpyDType, c.Shape)
	}
	return a, nil
}

// ExpectedArray is ReadExpected failing t on error.
func (c Case) ExpectedArray(t testing.TB) *npy.Array {
	t.Helper()
	a, err := c.ReadExpected()
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// GridIndices returns every index of the chunk grid of an array of shape
// cut into chunks of chunk, in C order (one empty index for a 0-d array,
// none when a dimension is empty).
func GridIndices(shape, chunk []int) [][]int {
	out := [][]int{{}}
	for d := range shape {
		var next [][]int
		n := (shape[d] + chunk[d] - 1) / chunk[d]
		for _, p := range out {
			for i := range n {
				next = append(next, append(slices.Clip(p), i))
			}
		}
		out = next
	}
	return out
}
