package zarr_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"testing"

	"golang.org/x/sync/errgroup"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
	"github.com/gozarr/gozarr/store"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// regionValue is the value the write-plan tests put at (r, c).
func regionValue(r, c int) float64 { return float64(1000*r + c + 1) }

// taskData returns the data of a task's box.
func taskData(t zarr.WriteTask) []byte {
	b := make([]byte, 8*t.Shape[0]*t.Shape[1])
	for i := range t.Shape[0] {
		for j := range t.Shape[1] {
			binary.LittleEndian.PutUint64(b[8*(i*t.Shape[1]+j):], math.Float64bits(regionValue(t.Start[0]+i, t.Start[1]+j)))
		}
	}
	return b
}

// Write a region of a sharded array with one task per shard, run by
// concurrent workers, then finalize.
func ExampleArray_NewWritePlan() {
	ctx := context.Background()
	meta, _ := zarr.NewArrayMetadata([]int{100, 60}, dtype.TypeFloat64, []int{10, 10}, zarr.Shards(20, 30))
	a, _ := zarr.CreateArray(ctx, mem.New(), "a", meta)
	plan, err := a.NewWritePlan([]nd.Item{nd.Range(20, 60), nd.All()}) // aligned to shards
	if err != nil {
		panic(err)
	}
	var eg errgroup.Group
	for _, task := range plan.Tasks() {
		eg.Go(func() error { return task.Run(ctx, taskData(task)) }) // one worker per task
	}
	if err := eg.Wait(); err != nil {
		panic(err)
	}
	if err := plan.Finalize(ctx); err != nil {
		panic(err)
	}
	v, _, _ := zarr.Read[float64](ctx, a, nd.Index(59), nd.Index(59))
	fmt.Println(len(plan.Tasks()), "tasks;", v)
	// Output: 4 tasks; [59060]
}

// TestWritePlan: tasks cover the region exactly once, run in any order
// (and again) to the same array; a misaligned region is refused unless
// partial units are allowed, and then gives the same array.
func TestWritePlan(t *testing.T) {
	ctx := context.Background()
	meta, err := zarr.NewArrayMetadata([]int{45, 50}, dtype.TypeFloat64, []int{10, 10}, zarr.Shards(20, 20))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		region  []nd.Item
		partial bool
		err     error
	}{
		{"aligned, with edge shards", []nd.Item{nd.Range(20, 45), nd.All()}, false, nil},
		{"misaligned", []nd.Item{nd.Range(5, 30), nd.All()}, false, zarr.ErrMisaligned},
		{"misaligned, partial allowed", []nd.Item{nd.Range(5, 30), nd.Range(3, 41)}, true, nil},
		{"a stepped region", []nd.Item{nd.Slice(0, 40, 2), nd.All()}, true, nd.ErrInvalidSelection},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := zarr.CreateArray(ctx, mem.New(), "a", meta)
			if err != nil {
				t.Fatal(err)
			}
			var opts []zarr.WritePlanOption
			if tc.partial {
				opts = append(opts, zarr.AllowPartialUnits())
			}
			plan, err := a.NewWritePlan(tc.region, opts...)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			tasks := plan.Tasks()
			var eg errgroup.Group
			for i := range tasks { // in reverse, and the first one twice
				task := tasks[len(tasks)-1-i]
				eg.Go(func() error { return task.Run(ctx, taskData(task)) })
			}
			eg.Go(func() error { return tasks[0].Run(ctx, taskData(tasks[0])) })
			if err := eg.Wait(); err != nil {
				t.Fatal(err)
			}
			if err := plan.Finalize(ctx); err != nil {
				t.Fatal(err)
			}
			got, _, err := zarr.Read[float64](ctx, a)
			if err != nil {
				t.Fatal(err)
			}
			sel, _ := a.Selection(tc.region...)
			inRegion := func(d, i int) bool { return i >= sel[d].Start && i < sel[d].Start+sel[d].Count }
			for r := range 45 {
				for c := range 50 {
					want := 0.0
					if inRegion(0, r) && inRegion(1, c) {
						want = regionValue(r, c)
					}
					if v := got[r*50+c]; v != want {
						t.Fatalf("(%d, %d) = %v, want %v", r, c, v, want)
					}
				}
			}
		})
	}
}

// TestWritePlanAll: All yields Tasks' tasks one at a time and stops when
// the loop does; Array.Finalize, for a plan that ran elsewhere, writes
// the metadata a WritePlan's Finalize writes.
func TestWritePlanAll(t *testing.T) {
	ctx := context.Background()
	st := mem.New()
	meta, err := zarr.NewArrayMetadata([]int{30, 20}, dtype.TypeInt32, []int{8, 8})
	if err != nil {
		t.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, st, "a", meta)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := a.NewWritePlan(nil)
	if err != nil {
		t.Fatal(err)
	}
	tasks := plan.Tasks()
	if len(tasks) != 4*3 {
		t.Fatalf("%d tasks, want 12", len(tasks))
	}
	i := 0
	for task := range plan.All() {
		if fmt.Sprint(task.Start, task.Shape, task.Key()) != fmt.Sprint(tasks[i].Start, tasks[i].Shape, tasks[i].Key()) {
			t.Fatalf("task %d: %v %v %s, Tasks has %v %v %s", i, task.Start, task.Shape, task.Key(), tasks[i].Start, tasks[i].Shape, tasks[i].Key())
		}
		if i++; i == 5 {
			break
		}
	}
	if i != 5 {
		t.Fatalf("All stopped after %d tasks, want 5", i)
	}
	if last := tasks[len(tasks)-1]; fmt.Sprint(last.Start, last.Shape) != "[24 16] [6 4]" {
		t.Errorf("last task %v %v, want the clipped corner [24 16] [6 4]", last.Start, last.Shape)
	}
	want, _ := st.Get(ctx, "a/zarr.json", store.Full())
	if err := st.Delete(ctx, "a/zarr.json"); err != nil {
		t.Fatal(err)
	}
	if err := a.Finalize(ctx); err != nil {
		t.Fatal(err)
	}
	if got, err := st.Get(ctx, "a/zarr.json", store.Full()); err != nil || string(got) != string(want) {
		t.Errorf("after Finalize: %q, %v; want the array's metadata %q", got, err, want)
	}
}
