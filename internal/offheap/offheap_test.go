package offheap

import (
	"os"
	"runtime"
	"testing"
)

// TestMap: mapped memory is writable and zeroed, of the length asked for,
// dropped pages read as zeros, and the calls fail cleanly off unix.
func TestMap(t *testing.T) {
	b, err := Map(3*os.Getpagesize()+5, true)
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" || runtime.GOOS == "js" || runtime.GOOS == "wasip1" {
		if err == nil {
			t.Fatal("Map succeeded without anonymous mappings")
		}
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	defer Unmap(b)
	if len(b) != 3*os.Getpagesize()+5 {
		t.Fatalf("len %d", len(b))
	}
	for i := range b {
		if b[i] != 0 {
			t.Fatalf("byte %d = %d, want 0", i, b[i])
		}
		b[i] = 0xff
	}
	DropPages(b)
	if runtime.GOOS == "linux" && b[os.Getpagesize()] != 0 {
		t.Error("a dropped page kept its bytes")
	}
	r, err := Reserve(1 << 20)
	if err != nil {
		t.Fatal(err)
	}
	r[len(r)-1] = 1
	Unmap(r)
	if _, err := Map(0, false); err == nil {
		t.Error("Map(0) succeeded")
	}
}
