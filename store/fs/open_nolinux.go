//go:build !linux

package fs

import (
	"errors"
	"io/fs"
)

// initBeneath does nothing: reads go through the os.Root.
func (s *Store) initBeneath() {}

// openValue opens name for reading (readFlags), confined to the root
// unless the store follows links, and returns it with its mode type and
// size.
func (s *Store) openValue(name string) (vfile, fs.FileMode, int64, error) {
	return s.openFileValue(name)
}

// preadFull is never called: only Linux has bare descriptors.
func preadFull(int, []byte, int64) (int, error) { return 0, errors.ErrUnsupported }

// closeFd is never called: only Linux has bare descriptors.
func closeFd(int) {}

// statMode returns the mode type and size of name's file, following links
// as reads do.
func (s *Store) statMode(name string) (fs.FileMode, int64, error) {
	fi, err := s.stat(name)
	if err != nil {
		return 0, 0, err
	}
	return fi.Mode().Type(), fi.Size(), nil
}
