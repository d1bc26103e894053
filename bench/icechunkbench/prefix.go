package main

import (
	"context"
	"iter"
	"strings"

	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
)

// prefixed is a store under a key prefix of a memory store.
type prefixed struct {
	m      *mem.Store
	prefix string
}

func (p prefixed) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	return p.m.Get(ctx, p.prefix+key, r)
}
func (p prefixed) Set(ctx context.Context, key string, v []byte) error {
	return p.m.Set(ctx, p.prefix+key, v)
}
func (p prefixed) Delete(ctx context.Context, key string) error { return p.m.Delete(ctx, p.prefix+key) }
func (p prefixed) GetVersion(ctx context.Context, key string) ([]byte, string, error) {
	return p.m.GetVersion(ctx, p.prefix+key)
}
func (p prefixed) SetIfVersion(ctx context.Context, key string, v []byte, version string) error {
	return p.m.SetIfVersion(ctx, p.prefix+key, v, version)
}
func (p prefixed) List(ctx context.Context, prefix string) iter.Seq2[string, error] {
	return func(yield func(string, error) bool) {
		for k, err := range p.m.List(ctx, p.prefix+prefix) {
			if !yield(strings.TrimPrefix(k, p.prefix), err) {
				return
			}
		}
	}
}
func (p prefixed) ListDir(ctx context.Context, dir string) ([]string, []string, error) {
	return p.m.ListDir(ctx, p.prefix+dir)
}

// prefixedReader is a reader under a key prefix.
type prefixedReader struct {
	r      store.Reader
	prefix string
}

func (p prefixedReader) Get(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	return p.r.Get(ctx, p.prefix+key, r)
}
func (p prefixedReader) Unwrap() store.Reader { return p.r }

func ndAt(i int) nd.Item { return nd.Range(i, i+1) }
