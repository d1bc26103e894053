package store

import (
	"context"
	"errors"
	"time"
)

// Errors of conditional reads.
var (
	// ErrChanged reports a value that is no longer the version a
	// ReadCondition names: the read returned no bytes of it.
	ErrChanged = errors.New("value changed")
	// ErrConditionUnsupported reports a ReadCondition a store cannot
	// check (a last-modified time on a store that reports only ETags).
	ErrConditionUnsupported = errors.New("read condition not supported")
)

// ReadCondition names a version of a value: its ETag, or its last
// modification time. The zero value names none.
type ReadCondition struct {
	ETag         string    // the value's ETag (quoted or not), or ""
	LastModified time.Time // the value's last-modified time, or zero
}

// IsZero reports whether c names no version.
func (c ReadCondition) IsZero() bool { return c.ETag == "" && c.LastModified.IsZero() }

// String formats c for errors and store IDs.
func (c ReadCondition) String() string {
	switch {
	case c.IsZero():
		return "none"
	case c.ETag != "":
		return "etag " + c.ETag
	}
	return "last-modified " + c.LastModified.UTC().Format(time.RFC3339)
}

// ConditionalReader is implemented by stores that read part of a value
// only while it is the version c names: a value of another version is an
// error wrapping ErrChanged (never its bytes), a missing key ErrNotFound,
// a condition the store cannot check ErrConditionUnsupported. Virtual
// references with a checksum (Icechunk's, store/virtual) read through it.
type ConditionalReader interface {
	GetIf(ctx context.Context, key string, r ByteRange, c ReadCondition) ([]byte, error)
}

// SameETag reports whether two ETags name the same version: equal once
// their quotes and a weak validator's W/ are removed.
func SameETag(a, b string) bool {
	norm := func(s string) string {
		if len(s) > 2 && (s[:2] == "W/" || s[:2] == "w/") {
			s = s[2:]
		}
		if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
			s = s[1 : len(s)-1]
		}
		return s
	}
	return norm(a) == norm(b)
}
