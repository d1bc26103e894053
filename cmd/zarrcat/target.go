package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
)

// openTarget opens the store a TARGET names and returns the node path of
// the target inside it. A local directory or file:// URL becomes a
// read-only filesystem store rooted at the node itself.
func openTarget(ctx context.Context, target string) (store.Reader, string, error) {
	dir := target
	if rest, ok := strings.CutPrefix(target, "file://"); ok {
		dir = rest
	} else if strings.Contains(target, "://") {
		return openURL(ctx, target)
	}
	info, err := os.Stat(dir)
	if err != nil {
		return nil, "", fmt.Errorf("target %s: %w", target, err)
	}
	if !info.IsDir() {
		return nil, "", fmt.Errorf("target %s: not a directory (give the array's or group's directory)", target)
	}
	st, err := fs.New(dir, fs.ReadOnly())
	if err != nil {
		return nil, "", err
	}
	return st, "", nil
}
