package zarr

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/gozarr/gozarr/store"
)

// ErrNodeExists reports a create at a path that already holds an array or
// a group (give Overwrite to replace it).
var ErrNodeExists = errors.New("zarr node exists")

// Overwrite lets CreateArray, CreateArrayV2, CreateGroup and CreateGroupV2
// replace a node already at their path: every key stored under the path
// (the old metadata, chunks and children) is deleted first, as
// zarr-python's overwrite=True does. Without it a create at a path that
// holds a node fails with ErrNodeExists.
func Overwrite() Option { return func(o *options) { o.overwrite = true } }

// nodeAt reports the type of the node at p (v3 zarr.json, else v2 .zarray
// or .zgroup), and whether there is one.
func nodeAt(ctx context.Context, s store.Reader, p string, limit int64) (NodeType, bool, error) {
	doc, err := getOptional(ctx, s, nodeKey(p, MetadataKey), limit)
	if err != nil {
		return "", false, err
	}
	if doc != nil {
		nt, err := ParseNodeType(doc)
		if err != nil {
			return "", false, fmt.Errorf("%s: %w", nodeKey(p, MetadataKey), err)
		}
		return nt, true, nil
	}
	for _, k := range []struct {
		key string
		nt  NodeType
	}{{V2ArrayKey, NodeArray}, {V2GroupKey, NodeGroup}} {
		_, err := s.Get(ctx, nodeKey(p, k.key), store.OffsetLen(0, 1))
		if err == nil {
			return k.nt, true, nil
		}
		if !errors.Is(err, store.ErrNotFound) {
			return "", false, err
		}
	}
	return "", false, nil
}

// prepareCreate readies p for a new node written in format (3 or 2), as
// zarr-python does: a node inside an array is refused; a node already at
// p is ErrNodeExists unless Overwrite, which deletes everything under p;
// missing parent groups (the root included) are written, empty, in the
// same format. Nothing is written when an error is returned.
func prepareCreate(ctx context.Context, s store.Store, p string, format int, o options) error {
	limit := o.metaLimit()
	var missing []string
	if p != "" {
		parts := strings.Split(p, "/")
		for i := range parts {
			anc := strings.Join(parts[:i], "/")
			nt, ok, err := nodeAt(ctx, s, anc, limit)
			if err != nil {
				return fmt.Errorf("create %q: parent %q: %w", p, "/"+anc, err)
			}
			if !ok {
				missing = append(missing, anc)
				continue
			}
			if nt == NodeArray {
				return fmt.Errorf("create %q: %w: parent %q is an array, and only groups hold nodes", p, ErrNodeType, "/"+anc)
			}
		}
	}
	nt, ok, err := nodeAt(ctx, s, p, limit)
	if err != nil {
		return fmt.Errorf("create %q: %w", p, err)
	}
	if ok {
		if !o.overwrite {
			return fmt.Errorf("create %q: %w: %s is there (give zarr.Overwrite to replace it and delete its contents)", p, ErrNodeExists, withArticle(nt))
		}
		if err := deleteUnder(ctx, s, p); err != nil {
			return fmt.Errorf("create %q: deleting the old %s: %w", p, nt, err)
		}
	}
	for _, anc := range missing {
		var err error
		if format == 2 {
			_, err = writeGroupV2(ctx, s, anc, nil)
		} else {
			_, err = writeGroupV3(ctx, s, anc, nil)
		}
		if err != nil {
			return fmt.Errorf("create %q: parent group %q: %w", p, "/"+anc, err)
		}
	}
	return nil
}

// DeleteNode deletes the node at path and everything stored under it
// (its metadata, chunks and children; the whole store for the root), as
// zarr-python's delete_dir does. Nothing there is not an error.
func DeleteNode(ctx context.Context, s store.Store, nodePath string) error {
	p, err := cleanPath(nodePath)
	if err != nil {
		return err
	}
	return deleteUnder(ctx, s, p)
}

// deleteUnder deletes every key of the node at p and below it.
func deleteUnder(ctx context.Context, s store.Store, p string) error {
	prefix := ""
	if p != "" {
		prefix = p + "/"
	}
	var keys []string
	for k, err := range s.List(ctx, prefix) {
		if err != nil {
			return err
		}
		keys = append(keys, k)
	}
	for _, k := range keys {
		if err := s.Delete(ctx, k); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return nil
}

// withArticle returns "an array" or "a group".
func withArticle(nt NodeType) string {
	if strings.HasPrefix(string(nt), "a") {
		return "an " + string(nt)
	}
	return "a " + string(nt)
}
