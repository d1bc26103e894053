package kerchunk

import "fmt"

// Describe formats key's reference as "url offset length" (tests).
func Describe(s *Store, key string) (string, error) {
	e, ok := s.refs[key]
	if !ok {
		return "", fmt.Errorf("no reference %q", key)
	}
	if e.url == "" {
		return fmt.Sprintf("inline %q", e.inline), nil
	}
	return fmt.Sprintf("%s %d %d", e.url, e.off, e.n), nil
}
