package icechunk

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMsgpackRoundTrip: spec 1 metadata values encoded by encodeMsgpack
// decode (with the reader that reads the official core's spec 1
// metadata) to the values given, in every length form.
func TestMsgpackRoundTrip(t *testing.T) {
	many := make([]any, 40)
	for i := range many {
		many[i] = float64(i - 20)
	}
	big := map[string]any{}
	for i := range 20 {
		big[strings.Repeat("k", i+1)] = i%2 == 0
	}
	for _, v := range []any{
		nil, true, false, 0.0, 1.0, 127.0, 128.0, -1.0, -32.0, -33.0, 1e15, -1e15, 2.5, -0.125,
		"", "a", strings.Repeat("x", 31), strings.Repeat("y", 32), strings.Repeat("z", 300), strings.Repeat("w", 70000),
		[]any{}, []any{"a", 1.0, nil}, many, big,
		map[string]any{"__icechunk": map[string]any{"is_root": true}, "n": []any{1.0, "two", map[string]any{}}},
	} {
		got, err := decodeMsgpack(encodeMsgpack(v))
		if err != nil {
			t.Errorf("%.40v: %v", v, err)
			continue
		}
		// compare as JSON: integers decode as Go integers, floats as float64
		a, _ := json.Marshal(v)
		b, _ := json.Marshal(got)
		if string(a) != string(b) {
			t.Errorf("round trip of %.60s gave %.60s", a, b)
		}
	}
}
