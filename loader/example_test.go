package loader_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/loader"
	"github.com/gozarr/gozarr/store/mem"
	"github.com/gozarr/gozarr/zarr"
)

// A training loop: block-shuffled batches of an array's rows with their
// labels, a checkpoint after a batch, and a loader resumed from it.
func Example() {
	ctx := context.Background()
	st := mem.New()
	// 64 samples of 4 features in chunks of 8 rows, and a label per sample.
	xm, _ := zarr.NewArrayMetadata([]int{64, 4}, dtype.TypeFloat32, []int{8, 4})
	x, _ := zarr.CreateArray(ctx, st, "x", xm)
	ym, _ := zarr.NewArrayMetadata([]int{64}, dtype.TypeInt32, []int{8})
	y, _ := zarr.CreateArray(ctx, st, "y", ym)
	feats, labels := make([]float32, 64*4), make([]int32, 64)
	for i := range labels {
		labels[i] = int32(i)
		for j := range 4 {
			feats[i*4+j] = float32(i) + float32(j)/10
		}
	}
	_ = zarr.Write(ctx, x, feats)
	_ = zarr.Write(ctx, y, labels)

	ds := loader.Dataset{Fields: []loader.Field{{Name: "x", Array: x}, {Name: "y", Array: y}}}
	cfg := loader.Config{BatchSize: 16, Sampler: loader.Sampler{Kind: loader.BlockShuffle, K: 4}, Seed: 1, Epochs: 2}
	l, err := loader.New(ctx, ds, cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	var checkpoint []byte
	var labelSum int32
	for {
		b, err := l.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			fmt.Println(err)
			return
		}
		// Row i of field 0 is sample b.Samples[i]'s features; field 1 its label.
		for i := range b.Len() {
			f0 := math.Float32frombits(binary.LittleEndian.Uint32(b.Data[0][i*16:]))
			lab := int32(binary.LittleEndian.Uint32(b.Data[1][i*4:]))
			if int(f0) != b.Samples[i] || int(lab) != b.Samples[i] {
				fmt.Println("mismatch")
			}
			labelSum += lab
		}
		b.Release()
		if b.Epoch == 0 && b.Index == 1 {
			checkpoint, _ = json.Marshal(l.State())
		}
	}
	s := l.Stats()
	l.Close()
	fmt.Println("samples:", s.Samples, "label sum:", labelSum, "amplification:", s.Amplification())

	// Resume from the checkpoint: the remaining 6 batches, as they came.
	json.Unmarshal(checkpoint, &cfg.From)
	l, _ = loader.New(ctx, ds, cfg)
	defer l.Close()
	n := 0
	for {
		b, err := l.Next(ctx)
		if err != nil {
			break
		}
		n++
		b.Release()
	}
	fmt.Println("batches after the checkpoint:", n)
	// Output:
	// samples: 128 label sum: 4032 amplification: 1
	// batches after the checkpoint: 6
}
