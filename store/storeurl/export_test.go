package storeurl

// Unregister removes the opener of scheme, as if its package were not in
// the program, until restore is called.
func Unregister(scheme string) (restore func()) {
	registry.Lock()
	defer registry.Unlock()
	old, ok := registry.schemes[scheme]
	delete(registry.schemes, scheme)
	return func() {
		registry.Lock()
		defer registry.Unlock()
		if ok {
			registry.schemes[scheme] = old
		}
	}
}
