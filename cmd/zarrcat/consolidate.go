package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/gozarr/gozarr/zarr"
)

// consolidateHelp is the help of "zarrcat consolidate".
const consolidateHelp = `zarrcat consolidate [--check] TARGET
Writes consolidated metadata for the group TARGET: every node's documents
below it, inline in a v3 zarr.json ("consolidated_metadata", as zarr-python
writes it) or in a v2 .zmetadata (as zarr-python and xarray write it), so
readers open the whole hierarchy with one request. Run it again after
changing the hierarchy.
  --check  writes nothing: compares the consolidated metadata with the
           stored nodes and reports changed, gone and unlisted nodes
           (exit status 1 when stale or absent).
`

// cmdConsolidate runs "zarrcat consolidate".
func cmdConsolidate(ctx context.Context, args []string, stdout io.Writer) error {
	flags, pos, err := splitArgs(args, map[string]bool{"check": false})
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: consolidate takes one TARGET", errUsage)
	}
	if _, check := flags["check"]; check {
		st, p, err := openTarget(ctx, pos[0])
		if err != nil {
			return err
		}
		g, err := zarr.OpenGroup(ctx, st, p, withLimits(ctx)...)
		if err != nil {
			return targetErr(ctx, st, pos[0], p, err)
		}
		ok, n := g.Consolidated()
		if !ok {
			return fmt.Errorf("group %s has no consolidated metadata", pos[0])
		}
		if err := g.VerifyConsolidated(ctx); err != nil {
			var se *zarr.StaleError
			if errors.As(err, &se) { // named as typed, not as group ""
				return &targetError{msg: pos[0] + ": " + strings.TrimPrefix(err.Error(), fmt.Sprintf("group %q: ", se.Group)), err: err}
			}
			return err
		}
		_, err = fmt.Fprintf(stdout, "consolidated metadata up to date: %d nodes\n", n)
		return err
	}
	st, err := openDestination(ctx, pos[0])
	if err != nil {
		return err
	}
	g, err := zarr.Consolidate(ctx, st, "")
	if err != nil {
		return targetErr(ctx, st, pos[0], "", err)
	}
	_, n := g.Consolidated()
	_, err = fmt.Fprintf(stdout, "consolidated %d nodes (zarr v%d)\n", n, g.ZarrFormat())
	return err
}
