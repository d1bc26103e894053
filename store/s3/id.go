package s3

// StoreID implements store.Identifier: the endpoint (when one is set),
// bucket and prefix, as an s3:// URL.
func (s *Store) StoreID() string {
	id := s.String()
	if ep := s.client.Options().BaseEndpoint; ep != nil && *ep != "" {
		id += "@" + *ep
	}
	return id
}
