package icechunk

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Distributed writes: workers write chunks into sessions that all start at
// one snapshot (SessionAt), each hands its chunk refs over as bytes
// (ExportChanges), and one session at the same snapshot takes them all in
// (ImportChanges) and commits once. The chunks themselves are written to
// chunks/ by the workers; only refs travel.

// SessionAt begins a session on branch whose base is the snapshot base (a
// snapshot of the repository, normally the branch's head when a job
// began), not the branch's current head. Its Commit moves the branch from
// base, rebasing over commits made since as Commit does.
func (r *Repository) SessionAt(ctx context.Context, branch string, base ID, opts ...WriteOption) (*Session, error) {
	s, err := r.Session(ctx, branch, opts...)
	if err != nil {
		return nil, err
	}
	if s.base.snap.id == base {
		return s, nil
	}
	snap, err := r.Checkout(ctx, base)
	if err != nil {
		return nil, err
	}
	s.base = snap
	return s, nil
}

// exportedRef is one chunk ref of ExportChanges' document.
type exportedRef struct {
	Path     string   `json:"path"`
	Coords   []uint32 `json:"coords"`
	Deleted  bool     `json:"deleted,omitempty"`
	Kind     string   `json:"kind,omitempty"` // native, inline, virtual
	ChunkID  string   `json:"chunk_id,omitempty"`
	Inline   []byte   `json:"inline,omitempty"`
	Offset   uint64   `json:"offset,omitempty"`
	Length   uint64   `json:"length,omitempty"`
	Location string   `json:"location,omitempty"`
	ETag     string   `json:"etag,omitempty"`
	Modified uint32   `json:"modified,omitempty"`
}

type exported struct {
	Base string        `json:"base"`
	Refs []exportedRef `json:"refs"`
}

// ExportChanges returns the session's chunk writes and deletions as a
// document for ImportChanges (JSON; the chunks' bytes are in chunks/
// already, except inline ones, which it holds). A session that changed
// node metadata (created, updated or deleted a node) cannot be exported:
// forked sessions write chunks of arrays that exist at their base.
func (s *Session) ExportChanges() ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	doc := exported{Base: s.base.snap.id.String(), Refs: []exportedRef{}}
	for _, p := range slices.Sorted(maps.Keys(s.changes)) {
		c := s.changes[p]
		if c.deleted || c.isNew || c.userData != nil {
			return nil, fmt.Errorf("%w: %s: a session exported for a merge may write chunks only, not change nodes", ErrUnsupported, p)
		}
		for _, k := range slices.Sorted(maps.Keys(c.chunks)) {
			r := c.chunks[k]
			if r == nil {
				doc.Refs = append(doc.Refs, exportedRef{Path: p, Coords: keyCoords(k), Deleted: true})
				continue
			}
			e := exportedRef{Path: p, Coords: r.coords, Kind: r.kind.String(), Offset: r.offset, Length: r.length}
			switch r.kind {
			case refNative:
				e.ChunkID = r.chunkID.String()
			case refInline:
				e.Inline, e.Length = r.inline, 0
			case refVirtual:
				e.Location, e.ETag, e.Modified = r.location, r.etag, r.modified
			}
			doc.Refs = append(doc.Refs, e)
		}
	}
	return json.Marshal(doc)
}

// ImportChanges takes in the chunk refs another session exported (a
// session forked from the same base snapshot). A chunk this session
// already changed, or that an earlier import changed, is ErrConflict (the
// workers' blocks overlapped): every chunk comes from one worker.
func (s *Session) ImportChanges(data []byte) error {
	var doc exported
	if err := json.Unmarshal(data, &doc); err != nil {
		return fmt.Errorf("%w: changes to import: %v", ErrCorrupt, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if doc.Base != s.base.snap.id.String() {
		return fmt.Errorf("%w: changes made at snapshot %s, this session is at %v", ErrConflict, doc.Base, s.base.snap.id)
	}
	refs := make([]*writeRef, len(doc.Refs))
	for i, e := range doc.Refs {
		m, _, ok := s.metaOf(e.Path)
		if !ok || m.kind != KindArray || len(e.Coords) != len(m.shape) {
			return fmt.Errorf("%w: changes to import: %s is no array of %d dimensions at the base", ErrCorrupt, e.Path, len(e.Coords))
		}
		if e.Deleted {
			continue
		}
		w := &writeRef{coords: slices.Clone(e.Coords), chunkRef: chunkRef{offset: e.Offset, length: e.Length}}
		switch e.Kind {
		case "native":
			id, err := ParseID(e.ChunkID)
			if err != nil {
				return fmt.Errorf("%w: changes to import: chunk id %q", ErrCorrupt, e.ChunkID)
			}
			w.kind, w.chunkID = refNative, id
		case "inline":
			w.kind, w.inline = refInline, e.Inline
		case "virtual":
			if _, _, _, err := splitVCC(e.Location); err != nil || !strings.Contains(e.Location, "://") {
				return fmt.Errorf("%w: changes to import: virtual location %q", ErrCorrupt, e.Location)
			}
			w.kind, w.location, w.etag, w.modified = refVirtual, e.Location, e.ETag, e.Modified
		default:
			return fmt.Errorf("%w: changes to import: chunk ref kind %q", ErrCorrupt, e.Kind)
		}
		refs[i] = w
	}
	// check every chunk first, so that a refused import changes nothing
	seen := map[string]bool{}
	for _, e := range doc.Refs {
		k := e.Path + "\x00" + coordsKey(e.Coords)
		if seen[k] {
			return fmt.Errorf("%w: changes to import: %s chunk %v twice", ErrCorrupt, e.Path, e.Coords)
		}
		seen[k] = true
		if c := s.changes[e.Path]; c != nil && c.chunks != nil {
			if _, ok := c.chunks[coordsKey(e.Coords)]; ok {
				return fmt.Errorf("%w: %s chunk %v is written by two of the sessions merged", ErrConflict, e.Path, e.Coords)
			}
		}
	}
	for i, e := range doc.Refs {
		s.touch(e.Path).chunks[coordsKey(e.Coords)] = refs[i]
	}
	return nil
}
