// Package listing gives the stores that hold their keys in memory (kerchunk
// and Parquet references, Icechunk snapshots and sessions) one List and
// one ListDir over a sorted slice of keys, with the argument checks and
// context handling of every store.Lister.
package listing

import (
	"context"
	"iter"
	"slices"
	"strings"

	"github.com/gozarr/gozarr/store"
)

// Sorted yields the keys of sorted (which must be sorted) that start with
// prefix, in order. An invalid prefix (store.ValidatePrefix) is yielded as
// that error, a done ctx as a *store.KeyError naming prefix.
func Sorted(ctx context.Context, sorted []string, prefix string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if err := store.ValidatePrefix(prefix); err != nil {
			yield("", err)
			return
		}
		i, _ := slices.BinarySearch(sorted, prefix)
		for ; i < len(sorted) && strings.HasPrefix(sorted[i], prefix); i++ {
			if err := ctx.Err(); err != nil {
				yield("", &store.KeyError{Op: "list", Key: prefix, Err: err})
				return
			}
			if !yield(sorted[i], nil) {
				return
			}
		}
	}
}

// Gathered is Sorted over the keys that gather returns (in any order;
// gather is called when iteration begins, after prefix is checked), for
// stores that work their keys out for each listing. An error of gather
// is yielded alone.
func Gathered(ctx context.Context, prefix string, gather func() ([]string, error)) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		if err := store.ValidatePrefix(prefix); err != nil {
			yield("", err)
			return
		}
		keys, err := gather()
		if err != nil {
			yield("", err)
			return
		}
		slices.Sort(keys)
		for k, err := range Sorted(ctx, keys, prefix) {
			if !yield(k, err) || err != nil {
				return
			}
		}
	}
}

// Dir lists one level below dir of sorted (which must be sorted): the keys
// directly in dir and the names of its sub-directories (ending in "/"),
// both relative to dir and sorted. dir is checked and completed with
// store.ListDirArg; a key of sorted that ends in "/" names a directory.
func Dir(ctx context.Context, sorted []string, dir string) (keys, dirs []string, err error) {
	if dir, err = store.ListDirArg(ctx, dir); err != nil {
		return nil, nil, err
	}
	i, _ := slices.BinarySearch(sorted, dir)
	for ; i < len(sorted) && strings.HasPrefix(sorted[i], dir); i++ {
		rest := sorted[i][len(dir):]
		if j := strings.IndexByte(rest, '/'); j >= 0 {
			// keys sharing a prefix are adjacent when sorted
			if d := rest[:j+1]; len(dirs) == 0 || dirs[len(dirs)-1] != d {
				dirs = append(dirs, d)
			}
			continue
		}
		if rest != "" {
			keys = append(keys, rest)
		}
	}
	return keys, dirs, nil
}
