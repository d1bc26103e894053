package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"

	"github.com/gozarr/gozarr/store"
)

var _ store.ConditionalWriter = (*Store)(nil)

// GetVersion implements store.ConditionalWriter: the whole object and its
// ETag, with one GetObject.
func (s *Store) GetVersion(ctx context.Context, key string) ([]byte, string, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, "", err
	}
	if err := s.acquire(ctx); err != nil {
		return nil, "", &store.KeyError{Op: "get", Key: key, Err: err}
	}
	defer s.release()
	out, err := s.client.GetObject(ctx, &awss3.GetObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.prefix + key)})
	if err != nil {
		return nil, "", s.wrap("get", key, err)
	}
	defer out.Body.Close()
	size := int64(-1)
	if out.ContentLength != nil {
		size = *out.ContentLength
	}
	b, err := store.ReadBody(out.Body, size)
	if err != nil {
		return nil, "", &store.KeyError{Op: "get", Key: key, Err: fmt.Errorf("reading body: %w", err)}
	}
	if out.ETag == nil || *out.ETag == "" {
		return nil, "", &store.KeyError{Op: "get", Key: key, Err: fmt.Errorf("%w: the server gave no ETag", errors.ErrUnsupported)}
	}
	return b, *out.ETag, nil
}

// SetIfVersion implements store.ConditionalWriter with one conditional
// PutObject: If-Match on the ETag read, or If-None-Match: * to create.
// A failed precondition (412), or a conflicting concurrent conditional
// write (409), is store.ErrConflict. Servers that ignore the conditions
// (older S3-compatible ones) give no protection: check yours.
func (s *Store) SetIfVersion(ctx context.Context, key string, value []byte, version string) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	if err := s.acquire(ctx); err != nil {
		return &store.KeyError{Op: "set", Key: key, Err: err}
	}
	defer s.release()
	in := &awss3.PutObjectInput{
		Bucket:        aws.String(s.bucket),
		Key:           aws.String(s.prefix + key),
		Body:          bytes.NewReader(value),
		ContentLength: aws.Int64(int64(len(value))),
	}
	if version == "" {
		in.IfNoneMatch = aws.String("*")
	} else {
		in.IfMatch = aws.String(version)
	}
	// One attempt: a server may answer a failed precondition before it
	// reads the body and close the connection (versitygw does), which the
	// client sees as a reset, not a 412; the SDK would send it again and
	// again.
	var err error
	for attempt := 0; ; attempt++ {
		in.Body = bytes.NewReader(value)
		_, err = s.client.PutObject(ctx, in, func(o *awss3.Options) { o.RetryMaxAttempts = 1 })
		if err == nil {
			return nil
		}
		if attempt >= 2 || ctx.Err() != nil || httpStatus(err) != 0 {
			break
		}
		// No answer: send it again only if the object is still the
		// version read (else the condition failed, below).
		if now, herr := s.headVersion(ctx, key); herr != nil || now != version {
			break
		}
	}
	var api smithy.APIError
	code := ""
	if errors.As(err, &api) {
		code = api.ErrorCode()
	}
	if st := httpStatus(err); st == http.StatusPreconditionFailed || st == http.StatusConflict ||
		code == "PreconditionFailed" || code == "ConditionalRequestConflict" {
		return &store.KeyError{Op: "set", Key: key, Err: fmt.Errorf("%w: %w", store.ErrConflict, err)}
	}
	if ctx.Err() == nil && httpStatus(err) == 0 {
		// No answer: the object's version tells whether the condition
		// failed (or our own write landed: the caller's retry of its
		// read-modify-write is idempotent either way).
		if now, herr := s.headVersion(ctx, key); herr == nil && now != version {
			return &store.KeyError{Op: "set", Key: key, Err: fmt.Errorf("%w: the object changed (the write was cut off: %w)", store.ErrConflict, err)}
		}
	}
	return s.wrap("set", key, err)
}

// headVersion returns key's ETag, "" when the object does not exist.
func (s *Store) headVersion(ctx context.Context, key string) (string, error) {
	out, err := s.client.HeadObject(ctx, &awss3.HeadObjectInput{Bucket: aws.String(s.bucket), Key: aws.String(s.prefix + key)})
	if err != nil {
		if errors.Is(s.wrap("head", key, err), store.ErrNotFound) {
			return "", nil
		}
		return "", err
	}
	if out.ETag == nil {
		return "", fmt.Errorf("no ETag for %q", key)
	}
	return *out.ETag, nil
}
