package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/storeurl"
)

// openTarget opens the store a TARGET names and returns the node path of
// the target inside it: the target itself is the store's root. Local
// directories and file:// URLs are opened read-only; s3:// and http(s)://
// go through storeurl (AWS settings from the standard environment).
func openTarget(ctx context.Context, target string) (store.Reader, string, error) {
	if strings.Contains(target, "://") && !strings.HasPrefix(target, "file://") {
		st, err := storeurl.Open(ctx, target)
		if err != nil {
			return nil, "", err
		}
		return st, "", nil
	}
	loc, err := storeurl.Parse(target)
	if err != nil {
		return nil, "", err
	}
	info, err := os.Stat(loc.Path)
	if err != nil {
		return nil, "", fmt.Errorf("target %s: %w", target, err)
	}
	if !info.IsDir() {
		return nil, "", fmt.Errorf("target %s: not a directory (give the array's or group's directory)", target)
	}
	st, err := storeurl.Open(ctx, target, storeurl.WithFS(fs.ReadOnly()))
	if err != nil {
		return nil, "", err
	}
	return st, "", nil
}
