package zarr_test

import (
	"context"
	"slices"
	"testing"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/store/storetest"
	"github.com/gozarr/gozarr/zarr"
)

// TestVLenS3 writes a sharded string array to S3 (the server of the
// GOZARR_S3_* variables, or an in-process fake) with conditional writes,
// and reads it whole and in part.
func TestVLenS3(t *testing.T) {
	ctx := context.Background()
	srv, ok := s3test.LookupEnv()
	if !ok {
		srv = s3test.NewFake(t, "gozarr")
	}
	st := srv.Store(t, storetest.UniquePrefix("vlen"))
	storetest.Cleanup(t, st)
	m, err := zarr.NewArrayMetadata([]int{40, 6}, dtype.TypeVarString, []int{5, 3}, zarr.Shards(20, 6))
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, st, "s", m)
	if err != nil {
		t.Fatal(err)
	}
	want := vlenValues(240, 5)
	if err := zarr.WriteStrings(ctx, a, want); err != nil {
		t.Fatal(err)
	}
	// Rewrite a part (read-modify-write of inner chunks in place).
	part := vlenValues(12, 9)
	if err := zarr.WriteStrings(ctx, a, part, nd.Range(3, 9), nd.Range(4, 6)); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		copy(want[(3+i)*6+4:(3+i)*6+6], part[2*i:2*i+2])
	}
	b, err := zarr.OpenArray(ctx, st, "s")
	if err != nil {
		t.Fatal(err)
	}
	got, _, err := zarr.ReadStrings(ctx, b)
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("read %v", err)
	}
	col, _, err := zarr.ReadStrings(ctx, b, nd.Every(3), nd.Index(5))
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range col {
		if v != want[3*i*6+5] {
			t.Fatalf("column element %d: %q, want %q", i, v, want[3*i*6+5])
		}
	}
}
