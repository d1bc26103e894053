package inflate

// Kernel names the decoding loop built in, for benchmark reports.
const Kernel = "pure Go"
