//go:build !s3

package main

// The default build: no AWS SDK, so a first build from a fresh clone
// compiles about 260 packages instead of 370. s3:// targets fail with
// s3Hint's instructions; `go build -tags s3` (s3.go) adds them.

// withS3 tells whether this build opens s3:// targets.
const withS3 = false
