package s3

import (
	"context"
	"fmt"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/storeurl"
)

// Importing the package registers s3:// with storeurl, which does not
// import it itself so that programs without S3 do not link the AWS SDK.
func init() {
	// Cannot fail: "s3" is a valid scheme storeurl leaves to this package.
	_ = storeurl.RegisterOptions("s3", openURL)
}

// openURL is the storeurl opener of s3://bucket/prefix URLs. opts are the
// Option values of storeurl.WithS3 and a store.Timeouts of
// storeurl.WithTimeouts.
func openURL(ctx context.Context, location string, opts []any) (store.Reader, error) {
	loc, err := storeurl.Parse(location)
	if err != nil {
		return nil, err
	}
	var so []Option
	for _, v := range opts {
		switch v := v.(type) {
		case Option:
			so = append(so, v)
		case store.Timeouts:
			so = append(so, WithTimeouts(v))
		default:
			return nil, fmt.Errorf("storeurl: %q: option of type %T: storeurl.WithS3 takes s3.Option values", location, v)
		}
	}
	st, err := Open(ctx, loc.Bucket, loc.Prefix, so...)
	if err != nil {
		return nil, fmt.Errorf("storeurl: %q: %w", location, err)
	}
	return st, nil
}
