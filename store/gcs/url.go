package gcs

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/storeurl"
)

func init() {
	// Neither can fail: the scheme and host are valid and not built in.
	_ = storeurl.Register("gs", openURL)
	_ = storeurl.RegisterHost("storage.googleapis.com", openURL)
}

// ErrURL reports a location ParseURL cannot read.
var ErrURL = fmt.Errorf("%w: not a GCS location", storeurl.ErrInvalidURL)

// ParseURL returns the bucket and key prefix of gs://bucket/prefix or
// https://storage.googleapis.com/bucket/prefix (prefix may be empty).
func ParseURL(location string) (bucket, prefix string, err error) {
	u, err := url.Parse(location)
	if err != nil {
		return "", "", fmt.Errorf("%w: %q: %w", ErrURL, location, err)
	}
	switch strings.ToLower(u.Scheme) {
	case "gs":
		bucket, prefix = u.Host, strings.TrimPrefix(u.Path, "/")
	case "https", "http":
		if !strings.EqualFold(u.Hostname(), "storage.googleapis.com") {
			return "", "", fmt.Errorf("%w: %q: host is not storage.googleapis.com", ErrURL, location)
		}
		bucket, prefix, _ = strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	default:
		return "", "", fmt.Errorf("%w: %q", ErrURL, location)
	}
	if bucket == "" {
		return "", "", fmt.Errorf("%w: %q: no bucket (want gs://bucket/prefix)", ErrURL, location)
	}
	return bucket, prefix, nil
}

// openURL is the storeurl opener of gs:// and storage.googleapis.com URLs.
func openURL(ctx context.Context, location string) (store.Reader, error) {
	bucket, prefix, err := ParseURL(location)
	if err != nil {
		return nil, err
	}
	st, err := Open(ctx, bucket, prefix)
	if err != nil {
		return nil, fmt.Errorf("storeurl: %q: %w", location, err)
	}
	return st, nil
}
