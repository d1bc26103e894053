package objstore

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/gozarr/gozarr/store"
)

// ErrBadListing reports a listing answer that cannot be right: a page
// repeating an earlier page's continuation token, endless empty pages, or
// names not in increasing order, which would make a listing loop or break
// its order.
var ErrBadListing = errors.New("bad listing answer")

// maxEmptyPages is how many pages in a row may hold nothing before a
// listing gives up.
const maxEmptyPages = 1000

// pages yields the pages below prefix (full name) with delim, each
// request under a slot and with retries, checking that the continuation
// tokens advance: no token twice, and not endless empty pages.
func (s *Store) pages(ctx context.Context, prefix, delim string) iter.Seq2[Page, error] {
	return func(yield func(Page, error) bool) {
		token := ""
		seen := map[string]bool{}
		empty := 0
		for {
			var p Page
			err := s.do(ctx, "list", nil, func(ctx context.Context) (err error) {
				p, err = s.d.ListPage(ctx, prefix, delim, token)
				return err
			})
			if !yield(p, err) || err != nil || p.Next == "" {
				return
			}
			if seen[p.Next] {
				yield(Page{}, fmt.Errorf("%w: continuation token %q repeated", ErrBadListing, p.Next))
				return
			}
			seen[p.Next] = true
			if empty++; len(p.Keys)+len(p.Dirs) > 0 {
				empty = 0
			}
			if empty > maxEmptyPages {
				yield(Page{}, fmt.Errorf("%w: %d empty pages in a row", ErrBadListing, empty))
				return
			}
			token = p.Next
		}
	}
}

// ordered appends name to names, or fails when it does not come after the
// last one.
func ordered(names []string, name string) ([]string, error) {
	if n := len(names); n > 0 && name <= names[n-1] {
		return nil, fmt.Errorf("%w: %q after %q", ErrBadListing, name, names[n-1])
	}
	return append(names, name), nil
}

// List yields every key starting with prefix, in lexical order, a page per
// request. Stopping the iteration stops the paging. Objects whose names
// are not valid keys (a "dir/" marker, say) are left out; pages that do
// not advance end the listing with ErrBadListing.
func (s *Store) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if prefix != "" {
			if err := store.ValidatePrefix(prefix); err != nil {
				yield("", err)
				return
			}
		}
		if err := ctx.Err(); err != nil {
			yield("", &store.KeyError{Op: "list", Key: prefix, Err: err})
			return
		}
		last := "" // no key is ""
		for p, err := range s.pages(ctx, s.prefix+prefix, "") {
			if err != nil {
				yield("", s.fail(ctx, "list", prefix, err))
				return
			}
			for _, name := range p.Keys {
				k, ok := strings.CutPrefix(name, s.prefix)
				if !ok || store.ValidateKey(k) != nil {
					continue
				}
				if k <= last {
					yield("", &store.KeyError{Op: "list", Key: prefix, Err: fmt.Errorf("%w: %q after %q", ErrBadListing, k, last)})
					return
				}
				last = k
				if !yield(k, nil) {
					return
				}
			}
		}
	}
}

// ListDir lists one level below dir with the delimiter "/": keys directly
// in dir and sub-directory names ending in "/", both relative to dir and
// sorted. Names that are not valid keys are left out.
func (s *Store) ListDir(ctx context.Context, dir string) (keys, dirs []string, err error) {
	if dir, err = store.ListDirArg(ctx, dir); err != nil {
		return nil, nil, err
	}
	full := s.prefix + dir
	for p, err := range s.pages(ctx, full, "/") {
		if err != nil {
			return nil, nil, s.fail(ctx, "list", dir, err)
		}
		for _, name := range p.Keys {
			if k, ok := strings.CutPrefix(name, full); ok && !strings.Contains(k, "/") && store.ValidateKey(k) == nil {
				if keys, err = ordered(keys, k); err != nil {
					return nil, nil, &store.KeyError{Op: "list", Key: dir, Err: err}
				}
			}
		}
		for _, d := range p.Dirs {
			d, ok := strings.CutPrefix(d, full)
			name, isDir := strings.CutSuffix(d, "/")
			if !ok || !isDir || strings.Contains(name, "/") || store.ValidateKey(name) != nil {
				continue
			}
			if dirs, err = ordered(dirs, d); err != nil {
				return nil, nil, &store.KeyError{Op: "list", Key: dir, Err: err}
			}
		}
	}
	return keys, dirs, nil
}
