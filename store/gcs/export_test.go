package gcs

// DefaultAuth exposes defaultAuth to the tests.
var DefaultAuth = defaultAuth
