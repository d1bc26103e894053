package codecs

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestRegisterTwice: a second Register of a name panics (it replaced the
// first silently, so which codec read an array hung on init order);
// Replace replaces on purpose and returns the factory it replaced.
func TestRegisterTwice(t *testing.T) {
	// crc32c's factory, so the name is a well-behaved codec for the tests
	// that try every registered one.
	first, _ := Lookup("crc32c")
	Register("gozarr.test.twice", first)
	func() {
		defer func() {
			if r := recover(); r == nil || !strings.Contains(r.(string), `"gozarr.test.twice"`) {
				t.Errorf("second Register: recovered %v, want a panic naming the codec", r)
			}
		}()
		Register("gozarr.test.twice", first)
	}()
	prev := Replace("gozarr.test.twice", first)
	if prev == nil {
		t.Fatal("Replace returned no previous factory")
	}
	if f, _ := Lookup("gozarr.test.twice"); f == nil {
		t.Fatal("replaced codec not registered")
	}
	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Error("second RegisterV2 did not panic")
			}
		}()
		RegisterV2("crc32c", func(json.RawMessage, int) (Spec, bool, error) { return Spec{}, false, nil })
	}()
}

// TestV2Spec: the v2 forms the core codecs register map to them; objects
// with fields numcodecs' codecs do not have, and ids with no mapping, are
// left to the default mapping.
func TestV2Spec(t *testing.T) {
	for _, tc := range []struct {
		id, object, name, cfg string
		ok                    bool
	}{
		{"zstd", `{"id":"zstd","level":3}`, "zstd", `{"checksum":false,"level":3}`, true},
		{"zstd", `{"id":"zstd","level":3,"checksum":true}`, "zstd", `{"checksum":true,"level":3}`, true},
		{"zstd", `{"id":"zstd","level":3,"extra":1}`, "", "", false},
		{"gzip", `{"id":"gzip"}`, "gzip", `{"level":1}`, true},
		{"crc32c", `{"id":"crc32c"}`, "crc32c", ``, true},
		{"crc32c", `{"id":"crc32c","location":"end"}`, "crc32c", ``, true},
		{"crc32c", `{"id":"crc32c","location":"start"}`, "", "", false},
		{"zlib", `{"id":"zlib","level":1}`, "", "", false},
	} {
		s, ok, err := V2Spec(tc.id, json.RawMessage(tc.object), 4)
		if err != nil || ok != tc.ok || s.Name != tc.name || string(s.Configuration) != tc.cfg {
			t.Errorf("V2Spec(%s) = %s %s %v %v, want %s %s %v", tc.object, s.Name, s.Configuration, ok, err, tc.name, tc.cfg, tc.ok)
		}
	}
}
