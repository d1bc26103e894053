package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"time"

	"github.com/gozarr/gozarr/store/fs"
	"github.com/gozarr/gozarr/store/storeurl"
)

// defaultCleanAge is how old a temporary file must be for clean to remove
// it by default: far older than any write in progress.
const defaultCleanAge = time.Hour

// cmdClean removes the temporary files (".gozarr-tmp-*") that writes cut
// short by a crash or a kill left in a local store, if they are older than
// --older-than (default 1h; 0 removes them all), and prints how many it
// removed.
func cmdClean(ctx context.Context, args []string, stdout io.Writer) error {
	flags, pos, err := splitArgs(args, map[string]bool{"older-than": true})
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("%w: clean takes one TARGET directory", errUsage)
	}
	age := defaultCleanAge
	if v, ok := flags["older-than"]; ok {
		if age, err = time.ParseDuration(v); err != nil || age < 0 {
			return fmt.Errorf("%w: --older-than wants a duration such as 1h or 10m, not %q", errUsage, v)
		}
	}
	loc, err := storeurl.Parse(pos[0])
	if err != nil {
		return err
	}
	if loc.Scheme != "file" {
		return fmt.Errorf("clean %s: only local directories have temporary files", pos[0])
	}
	if info, err := os.Stat(loc.Path); err != nil {
		if pe := (*iofs.PathError)(nil); errors.As(err, &pe) {
			err = pe.Err // the path is said once, as typed
		}
		return fmt.Errorf("clean %s: %w", pos[0], err)
	} else if !info.IsDir() {
		return fmt.Errorf("clean %s: not a directory", pos[0])
	}
	st, err := fs.New(loc.Path)
	if err != nil {
		return fmt.Errorf("clean %s: %w", pos[0], err)
	}
	n, err := st.CleanTemp(ctx, age)
	if err != nil {
		return fmt.Errorf("clean %s: removed %s, then: %w", pos[0], plural(n, "temporary file"), err)
	}
	fmt.Fprintf(stdout, "removed %s older than %v from %s\n", plural(n, "temporary file"), age, pos[0])
	return nil
}
