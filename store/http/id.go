package http

// StoreID implements store.Identifier: the base URL.
func (s *Store) StoreID() string { return s.base.String() }
