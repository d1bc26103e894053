package codecs

import (
	"encoding/json"
	"fmt"
	"sync"
)

// V2Mapper maps a Zarr v2 codec (a numcodecs object, as .zarray writes
// it in "compressor" or "filters", its "id" included) to the v3 codec
// that reads and writes its chunks byte for byte. typesize is the size of
// the elements reaching the codec (the data type's, or the last filter's
// "astype"). ok false leaves the object to the default mapping, the
// codec "numcodecs.<id>" with the object minus "id" as its configuration
// (an object with fields the mapping does not know, say).
type V2Mapper func(object json.RawMessage, typesize int) (spec Spec, ok bool, err error)

var v2Registry = struct {
	sync.RWMutex
	m map[string]V2Mapper
}{m: map[string]V2Mapper{}}

// RegisterV2 registers the mapping of the v2 codec id to a v3 codec. It is
// meant for the init function of the package implementing the v3 codec
// (blosc, zstd, gzip, crc32c), so that package owns its v2 form too. Like
// Register, a second mapping of one id panics. It is safe for concurrent
// use.
func RegisterV2(id string, m V2Mapper) {
	v2Registry.Lock()
	defer v2Registry.Unlock()
	if _, dup := v2Registry.m[id]; dup {
		panic(fmt.Sprintf("codecs: RegisterV2 called twice for %q", id))
	}
	v2Registry.m[id] = m
}

// V2Spec maps the v2 codec object of id with its registered V2Mapper; ok
// is false when none is registered or it leaves the object to the default
// mapping.
func V2Spec(id string, object json.RawMessage, typesize int) (spec Spec, ok bool, err error) {
	v2Registry.RLock()
	m := v2Registry.m[id]
	v2Registry.RUnlock()
	if m == nil {
		return Spec{}, false, nil
	}
	return m(object, typesize)
}

// specOf returns {"name": name, "configuration": cfg as JSON}.
func specOf(name string, cfg any) (Spec, bool, error) {
	b, err := json.Marshal(cfg)
	if err != nil {
		return Spec{}, false, err
	}
	return Spec{Name: name, Configuration: b}, true, nil
}
