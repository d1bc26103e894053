package main

import (
	"context"
	"fmt"

	"github.com/gozarr/gozarr/store"
)

// openURL opens a remote TARGET.
func openURL(ctx context.Context, target string) (store.Reader, string, error) {
	return nil, "", fmt.Errorf("target %s: URL schemes other than file:// are not supported yet", target)
}
