// Package cache holds the chunk caches that sit between fetch and decode:
// LRU by bytes, compressed in memory, on disk, and tiers of these.
package cache
