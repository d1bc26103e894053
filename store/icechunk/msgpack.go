package icechunk

import "github.com/gozarr/gozarr/internal/msgpack"

// decodeMsgpack decodes one MessagePack value that fills buf (spec
// version 1 metadata values), into the same JSON-like Go values as
// decodeFlex, with the same bounds on nesting and counts.
func decodeMsgpack(buf []byte) (any, error) {
	v, err := msgpack.Decode(buf, msgpack.Limits{MaxDepth: flexMaxDepth, MaxValues: flexMaxValues})
	if err != nil {
		return nil, corruptf("%v", err)
	}
	return v, nil
}
