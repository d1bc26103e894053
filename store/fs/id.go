package fs

// StoreID implements store.Identifier: the root directory's absolute path
// as a file:// URL, so stores of one directory share cache entries.
func (s *Store) StoreID() string { return "file://" + s.root }
