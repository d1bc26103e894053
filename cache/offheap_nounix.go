//go:build !unix

package cache

import "errors"

// mapBytes is not available: frames stay on the Go heap.
func mapBytes(int) ([]byte, error) { return nil, errors.New("no anonymous mappings") }

func unmapBytes([]byte) {}

func reserveBytes(int64) ([]byte, error) { return nil, errors.New("no anonymous mappings") }

func dropPages([]byte) {}

const mapPopulate = 0
