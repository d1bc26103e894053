package fs

// SetOpenat2 turns the Linux openat2 fast path for reads on or off (it is
// on by default where the kernel has it), so tests cover both ways a
// confined read opens its file, and returns a function restoring the
// previous setting.
func SetOpenat2(on bool) (restore func()) {
	old := noOpenat2.Swap(!on)
	return func() { noOpenat2.Store(old) }
}
