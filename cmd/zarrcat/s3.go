//go:build s3

package main

// Built with -tags s3: s3:// targets work. The default build leaves the
// AWS SDK out (about 110 of 370 packages, 40 % of a first build's CPU);
// see nos3.go.

import _ "github.com/gozarr/gozarr/store/s3" // registers s3:// with storeurl

// withS3 tells whether this build opens s3:// targets.
const withS3 = true
