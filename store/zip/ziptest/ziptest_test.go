package ziptest_test

import (
	"testing"

	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/store/zip/ziptest"
)

func TestOverMem(t *testing.T) {
	ziptest.TestOver(t, func(*testing.T) store.Store { return mem.New() })
}
