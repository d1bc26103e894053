package s3

import "github.com/gozarr/gozarr/store"

// CoalesceOptions implements store.Coalescer: the knobs GetRanges joins
// ranges with (WithCoalesce; default DefaultCoalesce).
func (s *Store) CoalesceOptions() store.CoalesceOptions { return s.coalesce }
