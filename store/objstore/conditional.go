package objstore

import (
	"context"
	"fmt"
	"net/http"
	"time"

	"github.com/gozarr/gozarr/store"
)

var _ store.ConditionalReader = (*Store)(nil)

// GetIf implements store.ConditionalReader: the range r of key, only while
// the object is the version c names (its ETag, or not modified after its
// time). The condition travels with the read (the driver sends If-Match /
// If-Unmodified-Since or its backend's equivalent, and a 412 answer is
// store.ErrChanged), and the answer that carries the bytes is checked
// against it too, so a server that ignores the condition still never
// yields bytes of another version. An answer that does not tell what c
// needs (no ETag, no Last-Modified) is store.ErrConditionUnsupported. A
// zero c is Get.
func (s *Store) GetIf(ctx context.Context, key string, r store.ByteRange, c store.ReadCondition) ([]byte, error) {
	if err := store.ValidateRequest("get", key, r); err != nil {
		return nil, err
	}
	return s.getIf(ctx, key, r, c)
}

// checkCondition checks an answer's validators against c: an ETag that is
// not c's, or a modification after c's time (to the second, as HTTP dates
// go), is store.ErrChanged; an answer silent on what c names is
// store.ErrConditionUnsupported.
func checkCondition(v Validators, c store.ReadCondition) error {
	if c.ETag != "" {
		switch {
		case v.ETag == "":
			return fmt.Errorf("%w: %s: the answer has no ETag", store.ErrConditionUnsupported, c)
		case !store.SameETag(v.ETag, c.ETag):
			return fmt.Errorf("%w: the object is at ETag %s, the condition names %s", store.ErrChanged, v.ETag, c.ETag)
		}
	}
	if !c.LastModified.IsZero() {
		switch {
		case v.LastModified.IsZero():
			return fmt.Errorf("%w: %s: the answer has no Last-Modified", store.ErrConditionUnsupported, c)
		case v.LastModified.Truncate(time.Second).After(c.LastModified.Truncate(time.Second)):
			return fmt.Errorf("%w: the object was modified at %s, after the condition's %s", store.ErrChanged,
				v.LastModified.UTC().Format(time.RFC3339), c.LastModified.UTC().Format(time.RFC3339))
		}
	}
	return nil
}

// HTTPConditions returns the request headers that carry c over HTTP:
// If-Match (the ETag quoted, as the header needs) and If-Unmodified-Since.
func HTTPConditions(c store.ReadCondition) (ifMatch, ifUnmodifiedSince string) {
	if c.ETag != "" {
		ifMatch = QuoteETag(c.ETag)
	}
	if !c.LastModified.IsZero() {
		ifUnmodifiedSince = UnmodifiedSince(c).Format(http.TimeFormat)
	}
	return ifMatch, ifUnmodifiedSince
}

// UnmodifiedSince returns the time a driver sends as If-Unmodified-Since
// for c: the second after c's (in UTC). A condition holds while the object
// was not modified after c's time to the second, as HTTP dates go; a
// server that keeps finer times (versitygw) would refuse an object written
// within c's own second if sent c's second itself. The layer checks the
// answer's Last-Modified against c to the second, so an object modified in
// the second after c's is still store.ErrChanged.
func UnmodifiedSince(c store.ReadCondition) time.Time {
	return c.LastModified.UTC().Truncate(time.Second).Add(time.Second)
}

// QuoteETag returns etag as an entity tag goes in If-Match: quoted (a
// weak W/ tag kept as it is).
func QuoteETag(etag string) string {
	if len(etag) >= 2 && (etag[0] == '"' || etag[:2] == "W/") {
		return etag
	}
	return `"` + etag + `"`
}

// ReadCondition returns the condition naming key's current version: its
// ETag and Last-Modified as the backend reports them (one Head), for a
// later GetIf (what a virtual reference records as its checksum).
func (s *Store) ReadCondition(ctx context.Context, key string) (store.ReadCondition, error) {
	if err := store.ValidateKey(key); err != nil {
		return store.ReadCondition{}, err
	}
	in, err := s.head(ctx, "get", key, store.ReadCondition{})
	if err != nil {
		return store.ReadCondition{}, err
	}
	return store.ReadCondition{ETag: in.ETag, LastModified: in.LastModified}, nil
}
