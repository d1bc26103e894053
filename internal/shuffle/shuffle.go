// Package shuffle holds the byte-unshuffle kernels that Blosc's shuffle
// filter and the numcodecs/HDF5 shuffle filter share: the k byte planes of
// a shuffled buffer (each n bytes long, one after the other) interleaved
// back into n elements of k bytes.
package shuffle
