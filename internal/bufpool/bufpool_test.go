package bufpool

import "testing"

func TestClasses(t *testing.T) {
	for _, n := range []int{0, 1, 4096, 4097, 5000, 1 << 20, 1<<20 + 1, 3 << 20, 64<<20 + 1, 100 << 20} {
		c, size := class(n)
		if size < n || (n > 4096 && size > n+n/4+1) {
			t.Errorf("n %d: class %d size %d", n, c, size)
		}
		if c2, s2 := class(size); c2 != c || s2 != size {
			t.Errorf("n %d: size %d is in class %d (%d), not %d", n, size, c2, s2, c)
		}
		b := Get(n)
		if len(*b) != n || cap(*b) != size {
			t.Errorf("Get(%d): len %d cap %d, want cap %d", n, len(*b), cap(*b), size)
		}
		Put(b)
	}
}

func TestReuse(t *testing.T) {
	b := Get(3 << 20)
	Put(b)
	// A request in another class is never served a buffer of this one.
	if other := Get(1 << 20); cap(*other) == cap(*b) {
		t.Fatalf("1 MiB request served from the 3 MiB class")
	}
	// A buffer of a capacity that is no class is dropped, not pooled.
	odd := make([]byte, 5000)
	Put(&odd)
	if got := Get(5000); cap(*got) == 5000 {
		t.Fatalf("odd-sized buffer came back from the pool")
	}
}
