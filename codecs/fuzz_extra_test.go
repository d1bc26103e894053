package codecs_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/gozarr/gozarr/codecs"
	_ "github.com/gozarr/gozarr/codecs/blosc"
	_ "github.com/gozarr/gozarr/codecs/numcodecs"
	_ "github.com/gozarr/gozarr/sharding"
)

// fullConfigs is a valid configuration of every registered codec naming
// every field the codec knows (its configuration's whole vocabulary):
// a field not among them is unknown, and the codec must refuse it.
var fullConfigs = map[string]string{
	"blosc":                       `{"cname":"zstd","clevel":5,"shuffle":"shuffle","typesize":4,"blocksize":0}`,
	"bytes":                       `{"endian":"little"}`,
	"crc32c":                      `{}`,
	"gzip":                        `{"level":5}`,
	"zstd":                        `{"level":3,"checksum":false}`,
	"transpose":                   `{"order":[0]}`,
	"vlen-utf8":                   `{}`,
	"vlen-bytes":                  `{}`,
	"sharding_indexed":            `{"chunk_shape":[2],"codecs":[{"name":"bytes","configuration":{"endian":"little"}}],"index_codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"crc32c"}],"index_location":"end"}`,
	"numcodecs.adler32":           `{"location":"start"}`,
	"numcodecs.crc32":             `{"location":"start"}`,
	"numcodecs.crc32c":            `{"location":"end"}`,
	"numcodecs.fletcher32":        `{}`,
	"numcodecs.jenkins_lookup3":   `{"initval":0,"prefix":null}`,
	"numcodecs.astype":            `{"encode_dtype":"<f4","decode_dtype":"<f8"}`,
	"numcodecs.bitround":          `{"keepbits":10}`,
	"numcodecs.categorize":        `{"labels":["a","b"],"dtype":"<U1","astype":"|u1"}`,
	"numcodecs.delta":             `{"dtype":"<i4","astype":"<i2"}`,
	"numcodecs.fixedscaleoffset":  `{"offset":1,"scale":10,"dtype":"<f8","astype":"<i4"}`,
	"numcodecs.quantize":          `{"digits":3,"dtype":"<f8","astype":"<f4"}`,
	"numcodecs.bz2":               `{"level":1}`,
	"numcodecs.gzip":              `{"level":1}`,
	"numcodecs.zlib":              `{"level":1}`,
	"numcodecs.lz4":               `{"acceleration":1}`,
	"numcodecs.imagecodecs_lzf":   `{"header":false}`,
	"numcodecs.imagecodecs_lz4h5": `{"level":1,"blocksize":0}`,
	"numcodecs.bitshuffle":        `{"elementsize":4,"blocksize":0,"cname":"lz4","clevel":5}`,
	"numcodecs.imagecodecs_szip":  `{"options_mask":141,"pixels_per_block":32,"bits_per_pixel":32,"pixels_per_scanline":120,"header":true}`,
	"numcodecs.imagecodecs_aec":   `{"bitspersample":16,"flags":8,"blocksize":16,"rsi":128}`,
	"numcodecs.lzma":              `{"format":1,"check":-1,"preset":null,"filters":null}`,
	"numcodecs.packbits":          `{}`,
	"numcodecs.shuffle":           `{"elementsize":4}`,
	"packbits":                    `{"padding_encoding":"none","first_bit":0,"last_bit":3}`,
	"bitround":                    `{"keepbits":3}`,
	"numcodecs.base64":            `{}`,
	"numcodecs.json2":             `{"allow_nan":true,"check_circular":true,"encoding":"utf-8","ensure_ascii":true,"indent":null,"separators":[",",":"],"skipkeys":false,"sort_keys":true,"strict":true}`,
	"numcodecs.msgpack2":          `{"raw":false,"use_bin_type":true,"use_single_float":false}`,
	"numcodecs.vlen-array":        `{"dtype":"<i4"}`,
}

// aliasFields are further fields a codec knows that cannot be given with
// its full configuration (another name of one of its fields).
var aliasFields = map[string][]string{
	"packbits":             {"start_bit", "end_bit"},
	"numcodecs.categorize": {},
}

// baseConfig returns the configuration FuzzCodecExtraFields starts from
// for codec name, and whether it names every field the codec knows: the
// fullConfigs entry, else the configuration the codec reports when built
// with none (a codec registered since the table was written), else "".
func baseConfig(name string) (cfg string, full bool) {
	if cfg, ok := fullConfigs[name]; ok {
		return cfg, true
	}
	c, err := codecs.New(codecs.Spec{Name: name})
	if err != nil {
		return "", false
	}
	s, err := codecs.SpecOf(c)
	if err != nil || len(s.Configuration) == 0 {
		return "{}", false
	}
	return string(s.Configuration), false
}

// TestFullConfigs: every registered codec has a base configuration that
// builds (so the fuzz target below starts from a valid configuration of
// each); one that needs a configuration has an entry in fullConfigs.
func TestFullConfigs(t *testing.T) {
	for _, name := range codecs.Registered() {
		cfg, _ := baseConfig(name)
		if cfg == "" {
			t.Errorf("codec %s needs a configuration: give it an entry in fullConfigs", name)
			continue
		}
		if _, err := codecs.New(codecs.Spec{Name: name, Configuration: json.RawMessage(cfg)}); err != nil {
			t.Errorf("%s %s: %v", name, cfg, err)
		}
	}
}

// extraFieldSeeds are (codec, field, value) triples: the arena
// probe of issue 24 among them.
var extraFieldSeeds = []struct{ codec, field, value string }{
	{"vlen-utf8", "gozarr_arena", "1"}, {"vlen-bytes", "gozarr_arena", `{"id":1}`},
	{"sharding_indexed", "gozarr_arena", "1"}, {"blosc", "arena", "null"},
	{"zstd", "must_understand", "false"}, {"numcodecs.zlib", "id", `"zlib"`}, {"bytes", "", `""`},
	{"gzip", "LEVEL", "3"}, {"transpose", "configuration", `{}`}, {"sharding_indexed", "codec", "[]"},
	{"packbits", "\u00e9", "[1,2]"}, {"", "x", "not json"},
}

// FuzzCodecExtraFields gives every registered codec its full
// configuration (baseConfig) plus one more field of any name and value: the codec
// must refuse the field (ErrInvalidConfig naming it "unknown field")
// unless it is one of its own, and must never panic. Field names that
// match a known one but for case are skipped (encoding/json matches them
// case-insensitively, as the codec's own field).
func FuzzCodecExtraFields(f *testing.F) {
	for _, s := range extraFieldSeeds {
		f.Add(s.codec, s.field, s.value)
	}
	names := codecs.Registered()
	f.Fuzz(func(t *testing.T, name, field, value string) {
		if _, ok := fullConfigs[name]; !ok {
			name = names[len(name)%len(names)]
		}
		for _, k := range aliasFields[name] {
			if strings.EqualFold(k, field) {
				return
			}
		}
		base, full := baseConfig(name)
		if base == "" {
			return // TestFullConfigs reports it
		}
		if !full {
			// Not every field the codec knows is listed: give it one no
			// codec knows.
			field = "gozarr_" + field
		}
		var cfg map[string]json.RawMessage
		if err := json.Unmarshal([]byte(base), &cfg); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for k := range cfg {
			if strings.EqualFold(k, field) {
				return
			}
		}
		if !json.Valid([]byte(value)) {
			value = "1"
		}
		cfg[field] = json.RawMessage(value)
		b, err := json.Marshal(cfg)
		if err != nil {
			return // a field name json cannot write (invalid UTF-8 is replaced, not refused)
		}
		_, err = codecs.New(codecs.Spec{Name: name, Configuration: b})
		if err == nil {
			t.Fatalf("%s accepted the unknown field %q: %s", name, field, b)
		}
		if !errors.Is(err, codecs.ErrInvalidConfig) || !strings.Contains(err.Error(), "unknown field") {
			t.Fatalf("%s with field %q: %v, want ErrInvalidConfig for an unknown field", name, field, err)
		}
	})
}
