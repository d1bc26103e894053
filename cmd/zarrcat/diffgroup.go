package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"strings"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/zarr"
)

// groupDiff is what diff of two groups reports: the nodes only one side
// has, nodes of different types, groups whose attributes differ, and the
// report of every array both have.
type groupDiff struct {
	OnlyA    []string               `json:"only_in_a"` // "path (type)"
	OnlyB    []string               `json:"only_in_b"`
	Types    []string               `json:"node_types"` // "path: group vs array"
	Attrs    []string               `json:"attributes"` // group paths
	Arrays   map[string]*diffReport `json:"arrays"`     // by path, those that differ
	Compared int                    `json:"arrays_compared"`
	Same     bool                   `json:"same"`
}

// diffGroups compares A and B when either is a group: the hierarchies
// node by node (paths from each target), arrays as diff compares two
// arrays. done is false when both are arrays (or either cannot be opened:
// the array diff says why).
func diffGroups(ctx context.Context, pos []string, flags map[string]string, budget int64, stdout, stderr io.Writer) (done bool, err error) {
	var sts [2]store.Reader
	var roots [2]string
	var types [2]zarr.NodeType
	var errs [2]error
	for i, t := range pos {
		st, p, err := openTarget(ctx, t)
		if err == nil {
			types[i], err = zarr.NodeTypeAt(ctx, st, p, withLimits(ctx)...)
			err = targetErr(ctx, st, t, p, err)
		}
		sts[i], roots[i], errs[i] = st, p, err
	}
	if types[0] != zarr.NodeGroup && types[1] != zarr.NodeGroup {
		return false, nil // arrays, or nothing to compare: the array diff says why
	}
	for _, err := range errs {
		if err != nil {
			return true, err
		}
	}
	var trees [2]map[string]*nodeInfo
	for i := range pos {
		n, err := newWalker(sts[i], false, true).warnTo(stderr, pos[i], roots[i]).open(ctx, roots[i], -1)
		if err == nil && n == nil {
			err = zarr.ErrNodeNotFound
		}
		if err != nil {
			return true, targetErr(ctx, sts[i], pos[i], roots[i], err)
		}
		trees[i] = map[string]*nodeInfo{}
		flattenTree(n, roots[i], trees[i])
	}
	d := &groupDiff{Arrays: map[string]*diffReport{}}
	paths := make([]string, 0, len(trees[0])+len(trees[1]))
	for p := range trees[0] {
		paths = append(paths, p)
	}
	for p := range trees[1] {
		if trees[0][p] == nil {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	for _, p := range paths {
		na, nb := trees[0][p], trees[1][p]
		switch {
		case nb == nil:
			d.OnlyA = append(d.OnlyA, fmt.Sprintf("%s (%s)", shown(p), na.NodeType))
		case na == nil:
			d.OnlyB = append(d.OnlyB, fmt.Sprintf("%s (%s)", shown(p), nb.NodeType))
		case na.NodeType != nb.NodeType:
			d.Types = append(d.Types, fmt.Sprintf("%s: %s vs %s", shown(p), na.NodeType, nb.NodeType))
		case na.NodeType == "group":
			if !reflect.DeepEqual(na.Attributes, nb.Attributes) {
				d.Attrs = append(d.Attrs, shown(p))
			}
		default:
			a, err := zarr.OpenArray(ctx, sts[0], na.Path, withLimits(ctx, zarr.WithMaxChunkBytes(math.MaxInt64))...)
			if err != nil {
				return true, err
			}
			b, err := zarr.OpenArray(ctx, sts[1], nb.Path, withLimits(ctx, zarr.WithMaxChunkBytes(math.MaxInt64))...)
			if err != nil {
				return true, err
			}
			sel, err := a.Selection()
			if err != nil {
				return true, err
			}
			r, err := diffArrays(ctx, a, b, sel, flags, budget, stderr)
			if se := (*sideError)(nil); errors.As(err, &se) { // the array of A or B, as typed
				return true, readErr(pos[se.side], roots[se.side], se.err)
			}
			if err != nil {
				return true, fmt.Errorf("array %s: %w", shown(p), err)
			}
			d.Compared++
			if !r.Same || len(r.Layout) > 0 {
				d.Arrays[shown(p)] = r
			}
		}
	}
	d.Same = len(d.OnlyA)+len(d.OnlyB)+len(d.Types)+len(d.Attrs) == 0
	for _, r := range d.Arrays {
		d.Same = d.Same && r.Same
	}
	if _, ok := flags["json"]; ok {
		err = writeJSON(stdout, d)
	} else {
		printGroupDiff(stdout, pos, d)
	}
	if err == nil && !d.Same {
		return true, errDiffer
	}
	return true, err
}

// flattenTree adds n and the nodes below it to out, by path from root.
func flattenTree(n *nodeInfo, root string, out map[string]*nodeInfo) {
	rel := strings.TrimPrefix(strings.TrimPrefix(n.Path, root), "/")
	out[rel] = n
	for _, c := range n.Children {
		flattenTree(c, root, out)
	}
}

// shown is a node path as diff prints it: "/" for the targets themselves.
func shown(p string) string { return "/" + p }

// printGroupDiff writes a group report for a shell user.
func printGroupDiff(w io.Writer, pos []string, d *groupDiff) {
	for _, p := range d.OnlyA {
		fmt.Fprintf(w, "only in A  %s\n", p)
	}
	for _, p := range d.OnlyB {
		fmt.Fprintf(w, "only in B  %s\n", p)
	}
	for _, t := range d.Types {
		fmt.Fprintf(w, "node type  %s\n", t)
	}
	for _, p := range d.Attrs {
		fmt.Fprintf(w, "metadata   %s: group attributes differ\n", p)
	}
	names := make([]string, 0, len(d.Arrays))
	for p := range d.Arrays {
		names = append(names, p)
	}
	slices.Sort(names)
	for _, p := range names {
		var b strings.Builder
		r := d.Arrays[p]
		r.Same = false // the per-array "same values" line is said below, once
		printDiff(&b, pos, r)
		for _, l := range strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n") {
			fmt.Fprintf(w, "%s: %s\n", p, l)
		}
		r.Same = len(r.Metadata) == 0 && r.Differing == 0
	}
	if d.Same {
		fmt.Fprintf(w, "%s and %s hold the same nodes and values (%s compared)\n", pos[0], pos[1], plural(d.Compared, "array"))
	}
}
