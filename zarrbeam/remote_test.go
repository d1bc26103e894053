package zarrbeam

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam"
	"github.com/gozarr/gozarr/dtype"
	_ "github.com/gozarr/gozarr/store/gcs" // gs:// locations
	"github.com/gozarr/gozarr/store/s3/s3test"
	"github.com/gozarr/gozarr/store/storeurl"
)

// TestStoreURLs rechunks a local array into S3 and GCS (the servers of
// .ci/s3server.sh and .ci/gcsserver.sh, when their GOZARR_* variables are
// set) and back: the transforms work with any store URL.
func TestStoreURLs(t *testing.T) {
	prefix := fmt.Sprintf("zarrbeam-test/%d", time.Now().UnixNano())
	var remotes []string
	if srv, ok := s3test.LookupEnv(); ok {
		SetStoreOptions(storeurl.WithS3(srv.Options()...))
		t.Cleanup(func() { SetStoreOptions() })
		remotes = append(remotes, fmt.Sprintf("s3://%s/%s", srv.Bucket, prefix))
	} else {
		t.Logf("no S3 server (%s): s3:// skipped", s3test.EnvEndpoint)
	}
	if ep, bucket := os.Getenv("GOZARR_GCS_ENDPOINT"), os.Getenv("GOZARR_GCS_BUCKET"); ep != "" && bucket != "" {
		t.Setenv("STORAGE_EMULATOR_HOST", ep)
		remotes = append(remotes, fmt.Sprintf("gs://%s/%s", bucket, prefix))
	} else {
		t.Log("no GCS emulator (GOZARR_GCS_ENDPOINT, GOZARR_GCS_BUCKET): gs:// skipped")
	}
	if len(remotes) == 0 {
		t.Skip("no S3 server or GCS emulator in the environment: start them with .ci/s3server.sh and .ci/gcsserver.sh")
	}
	dir := t.TempDir()
	shape := []int{700, 900}
	src := pattern(shape[0] * shape[1] * 2)
	sr := newArray(t, filepath.Join(dir, "src.zarr"), shape, dtype.TypeUint16, []int{100, 100}, nil, src)
	for i, remote := range remotes {
		mid := newArray(t, remote, shape, dtype.TypeUint16, []int{256, 512}, []int{128, 128}, nil)
		back := newArray(t, filepath.Join(dir, fmt.Sprint("back", i, ".zarr")), shape, dtype.TypeUint16, []int{300, 300}, nil, nil)
		for _, step := range [][2]Ref{{sr, mid}, {mid, back}} {
			p, s := beam.NewPipelineWithRoot()
			Finalize(s, step[1], Rechunk(s, step[0], step[1], RechunkOptions{MaxMem: 1 << 20}), FinalizeOptions{})
			if err := run(t, p); err != nil {
				t.Fatalf("%s → %s: %v", step[0], step[1], err)
			}
		}
		sameBytes(t, remote, readAll(t, mid), src)
		sameBytes(t, remote+" and back", readAll(t, back), src)
	}
}
