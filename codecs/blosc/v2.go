package blosc

import (
	"encoding/json"
	"fmt"

	"github.com/gozarr/gozarr/codecs"
)

func init() {
	codecs.RegisterV2("blosc", fromV2)
}

// fromV2 maps numcodecs' Blosc object (Zarr v2) to the v3 blosc codec:
// its defaults (cname lz4, clevel 5, shuffle 1, blocksize 0) filled in,
// shuffle 0/1/2 as "noshuffle"/"shuffle"/"bitshuffle" and -1
// (AUTOSHUFFLE) as "bitshuffle" for one-byte items, else "shuffle", and
// typesize the size of the elements reaching it (only encoding depends on
// it). An object with fields numcodecs' Blosc does not have is left to the
// default mapping (codecs.V2Mapper).
func fromV2(object json.RawMessage, typesize int) (codecs.Spec, bool, error) {
	var b struct {
		ID        string  `json:"id"`
		Cname     *string `json:"cname"`
		Clevel    *int    `json:"clevel"`
		Shuffle   *int    `json:"shuffle"`
		Blocksize *int    `json:"blocksize"`
	}
	if codecs.DecodeConfig(object, &b) != nil {
		return codecs.Spec{}, false, nil
	}
	cname, clevel, shuffle, blocksize := "lz4", 5, 1, 0
	if b.Cname != nil {
		cname = *b.Cname
	}
	if b.Clevel != nil {
		clevel = *b.Clevel
	}
	if b.Shuffle != nil {
		shuffle = *b.Shuffle
	}
	if b.Blocksize != nil {
		blocksize = *b.Blocksize
	}
	var sh string
	switch shuffle {
	case 0:
		sh = "noshuffle"
	case 1:
		sh = "shuffle"
	case 2:
		sh = "bitshuffle"
	case -1:
		sh = "shuffle"
		if typesize == 1 {
			sh = "bitshuffle"
		}
	default:
		return codecs.Spec{}, false, fmt.Errorf("blosc shuffle %d", shuffle)
	}
	cfg, err := json.Marshal(struct {
		Typesize  int    `json:"typesize"`
		Cname     string `json:"cname"`
		Clevel    int    `json:"clevel"`
		Shuffle   string `json:"shuffle"`
		Blocksize int    `json:"blocksize"`
	}{typesize, cname, clevel, sh, blocksize})
	if err != nil {
		return codecs.Spec{}, false, err
	}
	return codecs.Spec{Name: "blosc", Configuration: cfg}, true, nil
}
