package pyjson

import (
	"encoding/json"
	"testing"
)

// TestBareTokens: the bare tokens of Python's json.dumps are found outside
// strings only, with the member they are the value of, and quoting them
// makes standard JSON.
func TestBareTokens(t *testing.T) {
	doc := []byte("{\"fill_value\": NaN, \"a\": [Infinity, \"NaN\"],\n \"s\": \"x\\\" NaN\", \"b\": {\"fill_value\": -Infinity}}")
	got := BareTokens(doc)
	want := []Bare{{15, "NaN", "fill_value", 1}, {26, "Infinity", "", 1}, {81, "-Infinity", "fill_value", 2}}
	if len(got) != len(want) {
		t.Fatalf("BareTokens: %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("token %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	var v map[string]any
	if err := json.Unmarshal(QuoteBare(doc, got), &v); err != nil {
		t.Fatal(err)
	}
	if v["fill_value"] != "NaN" || v["b"].(map[string]any)["fill_value"] != "-Infinity" || v["s"] != "x\" NaN" {
		t.Errorf("quoted: %v", v)
	}
}

// FuzzBareTokens: any input is scanned without panicking, the offsets
// point at their tokens, and quoting them never breaks valid JSON.
func FuzzBareTokens(f *testing.F) {
	f.Add([]byte(`{"fill_value": NaN}`))
	f.Add([]byte(`[Infinity, -Infinity, "NaN", "\"`))
	f.Fuzz(func(t *testing.T, b []byte) {
		bs := BareTokens(b)
		for _, x := range bs {
			if string(b[x.Offset:x.Offset+len(x.Token)]) != x.Token {
				t.Fatalf("token %+v not at its offset", x)
			}
		}
		if json.Valid(b) && len(bs) == 0 {
			return
		}
		q := QuoteBare(b, bs)
		if json.Valid(b) && !json.Valid(q) {
			t.Fatalf("quoting broke %q", b)
		}
	})
}
