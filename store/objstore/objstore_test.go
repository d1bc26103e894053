package objstore_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/objstore"
	"github.com/gozarr/gozarr/store/storetest"
)

// memDriver is an objstore.Driver over a map, with generations as
// versions, counting its reads.
type memDriver struct {
	mu    sync.Mutex
	objs  map[string][]byte
	gens  map[string]int64
	next  int64
	reads atomic.Int64
	// ignoreConds makes the driver ignore read conditions, as a server
	// that does not evaluate If-Match would (the layer's check remains).
	ignoreConds bool
}

// memEpoch is the memDriver's clock: generation g was written at
// memEpoch + g seconds.
var memEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// validators returns name's ETag ("g<generation>") and time; d.mu held.
func (d *memDriver) validators(name string) objstore.Validators {
	g := d.gens[name]
	return objstore.Validators{ETag: `"g` + strconv.FormatInt(g, 10) + `"`, LastModified: memEpoch.Add(time.Duration(g) * time.Second)}
}

// check evaluates cond as a server does; d.mu held.
func (d *memDriver) check(name string, cond store.ReadCondition) error {
	if d.ignoreConds || cond.IsZero() {
		return nil
	}
	v := d.validators(name)
	if cond.ETag != "" && !store.SameETag(cond.ETag, v.ETag) || !cond.LastModified.IsZero() && v.LastModified.After(cond.LastModified) {
		return errChanged
	}
	return nil
}

var (
	errMissing  = errors.New("mem: no such object")
	errPrecond  = errors.New("mem: precondition failed")
	errNotRange = errors.New("mem: range not satisfiable")
	errChanged  = errors.New("mem: read precondition failed")
)

func newMemDriver() *memDriver {
	return &memDriver{objs: map[string][]byte{}, gens: map[string]int64{}}
}

func (d *memDriver) Read(_ context.Context, name string, off, n int64, cond store.ReadCondition) (objstore.Object, error) {
	d.reads.Add(1)
	d.mu.Lock()
	defer d.mu.Unlock()
	b, info, err := d.lookup(name, cond)
	if err != nil {
		return objstore.Object{}, err
	}
	size := info.Size
	if off < 0 {
		off = max(size+off, 0)
	}
	if off >= size && size > 0 {
		return objstore.Object{}, errNotRange
	}
	end := size
	if n >= 0 {
		end = min(off+n, size)
	}
	off = min(off, size)
	body := bytes.Clone(b[off:end])
	return objstore.Object{Body: io.NopCloser(bytes.NewReader(body)), Length: int64(len(body)), Version: info.Version,
		Validators: info.Validators}, nil
}

func (d *memDriver) Head(_ context.Context, name string, cond store.ReadCondition) (objstore.Info, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, info, err := d.lookup(name, cond)
	return info, err
}

// lookup returns name's value and what a Head tells of it, under cond;
// d.mu is held.
func (d *memDriver) lookup(name string, cond store.ReadCondition) ([]byte, objstore.Info, error) {
	b, ok := d.objs[name]
	if !ok {
		return nil, objstore.Info{}, errMissing
	}
	if err := d.check(name, cond); err != nil {
		return nil, objstore.Info{}, err
	}
	return b, objstore.Info{Size: int64(len(b)), Version: strconv.FormatInt(d.gens[name], 10), Validators: d.validators(name)}, nil
}

func (d *memDriver) Put(_ context.Context, name string, value []byte, cond objstore.Condition) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, exists := d.objs[name]
	switch {
	case cond.IfNoneMatch && exists:
		return errPrecond
	case cond.IfMatch != "" && (!exists || cond.IfMatch != strconv.FormatInt(d.gens[name], 10)):
		return errPrecond
	}
	d.next++
	d.objs[name], d.gens[name] = bytes.Clone(value), d.next
	return nil
}

func (d *memDriver) Delete(_ context.Context, name string) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.objs[name]; !ok {
		return errMissing
	}
	delete(d.objs, name)
	return nil
}

// ListPage returns pages of 2 names, to exercise the paging.
func (d *memDriver) ListPage(_ context.Context, prefix, delim, token string) (objstore.Page, error) {
	d.mu.Lock()
	var names []string
	seen := map[string]bool{}
	for k := range d.objs {
		if !strings.HasPrefix(k, prefix) {
			continue
		}
		if delim != "" {
			if i := strings.Index(k[len(prefix):], delim); i >= 0 {
				k = k[:len(prefix)+i+1]
			}
		}
		if !seen[k] {
			seen[k] = true
			names = append(names, k)
		}
	}
	d.mu.Unlock()
	sort.Strings(names)
	start := sort.SearchStrings(names, token)
	if token != "" && start < len(names) && names[start] == token {
		start++
	}
	var p objstore.Page
	for i := start; i < len(names) && i < start+2; i++ {
		if strings.HasSuffix(names[i], delim) && delim != "" {
			p.Dirs = append(p.Dirs, names[i])
		} else {
			p.Keys = append(p.Keys, names[i])
		}
		if i == start+1 && i+1 < len(names) {
			p.Next = names[i]
		}
	}
	return p, nil
}

func (d *memDriver) Classify(_ context.Context, _ string, err error) (objstore.Kind, error) {
	switch {
	case errors.Is(err, errMissing):
		return objstore.KindNotFound, err
	case errors.Is(err, errPrecond):
		return objstore.KindConflict, err
	case errors.Is(err, errNotRange):
		return objstore.KindEmptyRange, err
	case errors.Is(err, errChanged):
		return objstore.KindChanged, err
	}
	return objstore.KindOther, err
}

func newStore(t *testing.T, d objstore.Driver, prefix string) *objstore.Store {
	t.Helper()
	s, err := objstore.New(d, objstore.Config{Scheme: "mem", Bucket: "b", Prefix: prefix, Options: objstore.Options{Concurrency: 4,
		Coalesce: store.CoalesceOptions{MaxGap: 100, MaxSize: 1 << 20}}, Conditional: true})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestConformance runs storetest (capability checks included) over the
// layer with a memory driver.
func TestConformance(t *testing.T) {
	storetest.TestStore(t, func(t *testing.T) store.Store { return newStore(t, newMemDriver(), "p/q") })
}

// TestIdentityAndKnobs: two Stores over one bucket and prefix have one
// StoreID, another prefix or host another; the knobs GetRanges joins
// with are the ones reported, so three nearby ranges are one read.
func TestIdentityAndKnobs(t *testing.T) {
	d := newMemDriver()
	a, b, c := newStore(t, d, "x"), newStore(t, d, "/x/"), newStore(t, d, "y")
	if store.IDOf(a) != store.IDOf(b) || store.IDOf(a) == store.IDOf(c) || store.IDOf(a) != "mem://b/x/" {
		t.Errorf("IDs %q %q %q", store.IDOf(a), store.IDOf(b), store.IDOf(c))
	}
	h, _ := objstore.New(d, objstore.Config{Scheme: "mem", Host: "acct", Bucket: "b", Prefix: "x"})
	if store.IDOf(h) != "mem://acct/b/x/" {
		t.Errorf("ID with host: %q", store.IDOf(h))
	}
	caps := store.CapabilitiesOf(a)
	if caps.Coalesce.MaxGap != 100 || caps.MaxConcurrency != 4 || caps.Conditional == nil || caps.Into == nil || caps.Local {
		t.Errorf("capabilities %+v", caps)
	}
	ctx := context.Background()
	if err := a.Set(ctx, "k", bytes.Repeat([]byte("0123456789"), 100)); err != nil {
		t.Fatal(err)
	}
	d.reads.Store(0)
	got, err := store.GetRanges(ctx, a, "k", []store.ByteRange{store.OffsetLen(0, 10), store.OffsetLen(50, 10), store.OffsetLen(150, 10)})
	if err != nil || len(got) != 3 || string(got[2]) != "0123456789" {
		t.Fatalf("GetRanges %q %v", got, err)
	}
	if n := d.reads.Load(); n != 1 {
		t.Errorf("%d reads for 3 ranges within MaxGap, want 1", n)
	}
	d.reads.Store(0)
	if _, err := store.GetRanges(ctx, a, "k", []store.ByteRange{store.OffsetLen(0, 10), store.OffsetLen(500, 10)}); err != nil {
		t.Fatal(err)
	}
	if n := d.reads.Load(); n != 2 {
		t.Errorf("%d reads for 2 ranges farther apart than MaxGap, want 2", n)
	}
}

// TestUnconditional: a Store whose driver has no conditions is no
// ConditionalWriter.
func TestUnconditional(t *testing.T) {
	s, err := objstore.New(newMemDriver(), objstore.Config{Scheme: "mem", Bucket: "b"})
	if err != nil {
		t.Fatal(err)
	}
	if store.CapabilitiesOf(s).Conditional != nil {
		t.Error("declares conditional writes it does not have")
	}
	if err := s.SetIfVersion(context.Background(), "k", nil, ""); err == nil {
		t.Error("SetIfVersion without conditions succeeded")
	}
	if _, err := objstore.New(nil, objstore.Config{}); err == nil {
		t.Error("nil driver accepted")
	}
}

// TestConditionalReads: GetIf under storetest's checks, over a driver
// that evaluates conditions (a failed one is KindChanged) and over one
// that ignores them, where the layer's check of the answer's validators
// alone keeps other versions' bytes out; an answer without validators is
// ErrConditionUnsupported.
func TestConditionalReads(t *testing.T) {
	for _, ignore := range []bool{false, true} {
		d := newMemDriver()
		d.ignoreConds = ignore
		s := newStore(t, d, "c")
		t.Run("ignore="+strconv.FormatBool(ignore), func(t *testing.T) {
			storetest.TestConditionalReader(t, s, s, s.ReadCondition)
		})
	}
	s := newStore(t, noValidators{newMemDriver()}, "")
	ctx := context.Background()
	if err := s.Set(ctx, "k", []byte("abc")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []store.ReadCondition{{ETag: "x"}, {LastModified: time.Now()}} {
		if _, err := s.GetIf(ctx, "k", store.OffsetLen(0, 2), c); !errors.Is(err, store.ErrConditionUnsupported) {
			t.Errorf("GetIf(%s) without validators: %v, want ErrConditionUnsupported", c, err)
		}
	}
	if _, err := s.GetIf(ctx, "../k", store.Full(), store.ReadCondition{ETag: "x"}); !errors.Is(err, store.ErrInvalidKey) {
		t.Errorf("invalid key: %v", err)
	}
}

// noValidators is a driver whose answers tell no ETag or time and which
// ignores read conditions.
type noValidators struct{ *memDriver }

func (d noValidators) Read(ctx context.Context, name string, off, n int64, _ store.ReadCondition) (objstore.Object, error) {
	o, err := d.memDriver.Read(ctx, name, off, n, store.ReadCondition{})
	o.Validators = objstore.Validators{}
	return o, err
}

func (d noValidators) Head(ctx context.Context, name string, _ store.ReadCondition) (objstore.Info, error) {
	in, err := d.memDriver.Head(ctx, name, store.ReadCondition{})
	in.Validators = objstore.Validators{}
	return in, err
}
