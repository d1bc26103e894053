package inflate

import stdadler "hash/adler32"

// adler32 returns the Adler-32 checksum of p.
func adler32(p []byte) uint32 {
	return stdadler.Checksum(p)
}
