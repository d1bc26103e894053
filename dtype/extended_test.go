package dtype

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// must returns d, panicking on a constructor error (the tests' arguments
// are valid).
func must(d DataType, err error) DataType {
	if err != nil {
		panic(err)
	}
	return d
}

func TestParseNumpyExtended(t *testing.T) {
	u3 := must(FixedUTF32(3))
	s3 := must(FixedBytes(3))
	ns := must(Datetime64(Nanoseconds, 1))
	s10 := must(Datetime64(Seconds, 10))
	tdus := must(Timedelta64(Microseconds, 1))
	cases := []struct {
		descr string
		d     DataType
		big   bool
		numpy string
	}{
		{"<U3", u3, false, "<U3"}, {">U3", u3, true, "<U3"}, {"U3", u3, false, "<U3"},
		{"|S3", s3, false, "|S3"}, {"S3", s3, false, "|S3"},
		{"<M8[ns]", ns, false, "<M8[ns]"}, {">M8[ns]", ns, true, "<M8[ns]"},
		{"<M8[10s]", s10, false, "<M8[10s]"}, {"<m8[us]", tdus, false, "<m8[us]"},
		{"<m8[μs]", tdus, false, "<m8[us]"}, {"bfloat16", TypeBFloat16, false, "<V2"},
	}
	for _, c := range cases {
		d, big, err := ParseNumpy(c.descr)
		if err != nil || d != c.d || big != c.big || d.NumpyDescr() != c.numpy {
			t.Errorf("ParseNumpy(%q) = %v, %v, %v (numpy %s); want %v, %v, %s", c.descr, d, big, err, d.NumpyDescr(), c.d, c.big, c.numpy)
		}
	}
	if u3.Size() != 12 || u3.SwapUnit() != 4 || s3.SwapUnit() != 1 || ns.SwapUnit() != 8 || TypeBFloat16.SwapUnit() != 2 {
		t.Errorf("sizes/swap units wrong: %d %d %d %d %d", u3.Size(), u3.SwapUnit(), s3.SwapUnit(), ns.SwapUnit(), TypeBFloat16.SwapUnit())
	}
}

func TestParseExtension(t *testing.T) {
	cases := []struct {
		name, cfg string
		want      string // String() of the type, "" for an error
		conf      string // Configuration() when want is set
	}{
		{"fixed_length_utf32", `{"length_bytes": 12}`, "fixed_length_utf32[3]", `{"length_bytes":12}`},
		{"null_terminated_bytes", `{"length_bytes": 3}`, "null_terminated_bytes[3]", `{"length_bytes":3}`},
		{"numpy.datetime64", `{"unit": "s", "scale_factor": 10}`, "numpy.datetime64[10s]", `{"unit":"s","scale_factor":10}`},
		{"numpy.timedelta64", `{"unit": "ns", "scale_factor": 1}`, "numpy.timedelta64[ns]", `{"unit":"ns","scale_factor":1}`},
		{"datetime64", `{"unit": "D"}`, "numpy.datetime64[D]", `{"unit":"D","scale_factor":1}`},
		{"bfloat16", ``, "bfloat16", ``},
		{"fixed_length_utf32", `{"length_bytes": 13}`, "", ""},
		{"fixed_length_utf32", ``, "", ""},
		{"null_terminated_bytes", `{"length_bytes": 0}`, "", ""},
		{"null_terminated_bytes", `{"length_bytes": 3, "x": 1}`, "", ""},
		{"numpy.datetime64", `{"unit": "parsec", "scale_factor": 1}`, "", ""},
		{"numpy.datetime64", `{"unit": "s", "scale_factor": 0}`, "", ""},
		{"numpy.datetime64", `{"unit": "s", "scale_factor": 4294967296}`, "", ""},
		{"bfloat16", `{"a": 1}`, "", ""},
	}
	for _, c := range cases {
		var cfg json.RawMessage
		if c.cfg != "" {
			cfg = json.RawMessage(c.cfg)
		}
		d, ok, err := ParseExtension(c.name, cfg)
		if !ok {
			t.Errorf("%s %s: not recognised", c.name, c.cfg)
			continue
		}
		if c.want == "" {
			if !errors.Is(err, ErrUnknown) {
				t.Errorf("%s %s: %v, %v; want ErrUnknown", c.name, c.cfg, d, err)
			}
			continue
		}
		if err != nil || d.String() != c.want || string(d.Configuration()) != c.conf {
			t.Errorf("%s %s = %v (%s), %v; want %s (%s)", c.name, c.cfg, d, d.Configuration(), err, c.want, c.conf)
		}
	}
	if _, ok, _ := ParseExtension("float32", nil); ok {
		t.Error("float32 taken as an extension")
	}
}

func TestExtendedFill(t *testing.T) {
	u3 := must(FixedUTF32(3))
	s3 := must(FixedBytes(3))
	ns := must(Datetime64(Nanoseconds, 1))
	td := must(Timedelta64(Microseconds, 1))
	cases := []struct {
		d        DataType
		v3, hex  string
		back, v2 string // FormatFill and FormatFillV2 results
	}{
		{u3, `"ab"`, "610000006200000000000000", `"ab"`, `"ab"`},
		{u3, `""`, "000000000000000000000000", `""`, `""`},
		{u3, `"é€"`, "e9000000ac20000000000000", `"é€"`, `"é€"`},
		{s3, `"YWI="`, "616200", `"YWI="`, `"YWI="`},
		{s3, `""`, "000000", `""`, `""`},
		{ns, `-9223372036854775808`, "0000000000000080", `-9223372036854775808`, `-9223372036854775808`},
		{ns, `"NaT"`, "0000000000000080", `-9223372036854775808`, `-9223372036854775808`},
		{td, `5`, "0500000000000000", `5`, `5`},
		{TypeBFloat16, `1.0`, "803f", `1.0`, `1.0`},
		{TypeBFloat16, `"NaN"`, "c07f", `"NaN"`, `"NaN"`},
		{TypeBFloat16, `"0x7fc1"`, "c17f", `"0x7fc1"`, `"NaN"`},
		{TypeBFloat16, `"-Infinity"`, "80ff", `"-Infinity"`, `"-Infinity"`},
		{TypeBFloat16, `0.1`, "cd3d", `0.10009765625`, `0.10009765625`},
	}
	for _, c := range cases {
		elem, err := ParseFill(c.d, json.RawMessage(c.v3))
		if err != nil || hex.EncodeToString(elem) != c.hex {
			t.Errorf("ParseFill(%s, %s) = %x, %v; want %s", c.d, c.v3, elem, err, c.hex)
			continue
		}
		if js, err := FormatFill(c.d, elem); err != nil || string(js) != c.back {
			t.Errorf("FormatFill(%s, %x) = %s, %v; want %s", c.d, elem, js, err, c.back)
		}
		if js, err := FormatFillV2(c.d, elem); err != nil || string(js) != c.v2 {
			t.Errorf("FormatFillV2(%s, %x) = %s, %v; want %s", c.d, elem, js, err, c.v2)
		}
	}
	for _, c := range []struct {
		d   DataType
		raw string
	}{{u3, `"abcd"`}, {u3, `1`}, {s3, `"YWJjZA=="`}, {s3, `"*"`}, {ns, `1.5`}, {ns, `"now"`},
		{ns, `9223372036854775808`}, {TypeBFloat16, `"0x7fc"`}, {TypeBFloat16, `true`}} {
		if elem, err := ParseFill(c.d, json.RawMessage(c.raw)); !errors.Is(err, ErrInvalidFill) {
			t.Errorf("ParseFill(%s, %s) = %x, %v; want ErrInvalidFill", c.d, c.raw, elem, err)
		}
	}
}

func TestBFloat16FromFloat64(t *testing.T) {
	cases := []struct {
		f    float64
		want BFloat16
	}{
		{1, 0x3f80}, {-2, 0xc000}, {0, 0}, {math.Copysign(0, -1), 0x8000},
		{math.Inf(1), 0x7f80}, {math.MaxFloat64, 0x7f80}, {-math.MaxFloat64, 0xff80},
		{1 + 1.0/256, 0x3f80},               // exact tie, rounds to even (down)
		{1 + 3.0/256, 0x3f82},               // exact tie, rounds to even (up)
		{1 + 1.0/256 + 1.0/(1<<40), 0x3f81}, // just above the tie: float32 would round it onto the tie
		{math.SmallestNonzeroFloat64, 0}, {math.NaN(), 0x7fc0},
	}
	for _, c := range cases {
		if got := BFloat16FromFloat64(c.f); got != c.want {
			t.Errorf("BFloat16FromFloat64(%v) = %#04x, want %#04x", c.f, uint16(got), uint16(c.want))
		}
	}
	if f := BFloat16(0x3f81).Float32(); f != 1+1.0/128 {
		t.Errorf("Float32 = %v", f)
	}
}

func TestFormatTime(t *testing.T) {
	// The expected strings are NumPy 2's str(np.datetime64(v, unit)).
	cases := []struct {
		v    int64
		unit string
		want string
	}{
		{0, "Y", "1970"}, {50, "Y", "2020"}, {-1, "M", "1969-12"}, {601, "M", "2020-02"},
		{1, "W", "1970-01-08"}, {-1, "D", "1969-12-31"}, {18262, "D", "2020-01-01"},
		{25, "h", "1970-01-02T01"}, {-1, "m", "1969-12-31T23:59"},
		{1577836800, "s", "2020-01-01T00:00:00"}, {-1, "s", "1969-12-31T23:59:59"},
		{1, "ms", "1970-01-01T00:00:00.001"}, {-1, "us", "1969-12-31T23:59:59.999999"},
		{5, "ns", "1970-01-01T00:00:00.000000005"}, {-1, "ns", "1969-12-31T23:59:59.999999999"},
		{1, "ps", "1970-01-01T00:00:00.000000000001"}, {1, "fs", "1970-01-01T00:00:00.000000000000001"},
		{-1, "as", "1969-12-31T23:59:59.999999999999999999"}, {3, "10s", "1970-01-01T00:00:30"},
		{1, "25D", "1970-01-26"}, {NaT, "s", "NaT"},
	}
	for _, c := range cases {
		d, _, err := ParseNumpy("<M8[" + c.unit + "]")
		if err != nil {
			t.Fatal(err)
		}
		if got := FormatTime(d, c.v); got != c.want {
			t.Errorf("FormatTime(%d %s) = %q, want %q", c.v, c.unit, got, c.want)
		}
	}
	td := must(Timedelta64(Seconds, 10))
	if got := FormatTime(td, 3); got != "30 s" {
		t.Errorf("timedelta: %q", got)
	}
	if got := FormatTime(must(Datetime64(Weeks, 1)), math.MaxInt64); got != "9223372036854775807 W" {
		t.Errorf("overflowing datetime: %q", got)
	}
}

func TestTimeConversions(t *testing.T) {
	ref := time.Date(2020, 2, 29, 12, 30, 15, 123456789, time.UTC)
	for _, c := range []struct {
		unit string
		want int64
		back time.Time
	}{
		{"ns", 1582979415123456789, ref},
		{"us", 1582979415123456, ref.Truncate(time.Microsecond)},
		{"s", 1582979415, ref.Truncate(time.Second)},
		{"D", 18321, time.Date(2020, 2, 29, 0, 0, 0, 0, time.UTC)},
		{"M", 601, time.Date(2020, 2, 1, 0, 0, 0, 0, time.UTC)},
		{"Y", 50, time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"10s", 158297941, time.Unix(1582979410, 0).UTC()},
	} {
		d, _, _ := ParseNumpy("<M8[" + c.unit + "]")
		v, err := d.FromTime(ref)
		if err != nil || v != c.want {
			t.Errorf("FromTime %s = %d, %v; want %d", c.unit, v, err, c.want)
			continue
		}
		if back, ok := d.Time(v); !ok || !back.Equal(c.back) {
			t.Errorf("Time %s %d = %v, %v; want %v", c.unit, v, back, ok, c.back)
		}
	}
	ns := must(Datetime64(Nanoseconds, 1))
	if _, err := ns.FromTime(time.Date(3000, 1, 1, 0, 0, 0, 0, time.UTC)); !errors.Is(err, ErrUnknown) {
		t.Errorf("year 3000 in ns: %v", err)
	}
	if _, ok := ns.Time(NaT); ok {
		t.Error("NaT converted to a time")
	}
	td := must(Timedelta64(Milliseconds, 1))
	if dur, ok := td.Duration(-1500); !ok || dur != -1500*time.Millisecond {
		t.Errorf("Duration = %v, %v", dur, ok)
	}
}

func TestStrings(t *testing.T) {
	u3 := must(FixedUTF32(3))
	s2 := must(FixedBytes(2))
	b, err := PutStrings(u3, []string{"ab", "", "é€x"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := Strings(u3, b)
	if err != nil || !slices.Equal(got, []string{"ab", "", "é€x"}) {
		t.Errorf("Strings = %q, %v", got, err)
	}
	if _, err := PutStrings(u3, []string{"abcd"}); !errors.Is(err, ErrUnknown) {
		t.Errorf("too long: %v", err)
	}
	if _, err := PutStrings(u3, []string{"\xff"}); !errors.Is(err, ErrUnknown) {
		t.Errorf("bad utf-8: %v", err)
	}
	if _, err := Strings(u3, []byte{0, 0, 0x11, 0, 0, 0, 0, 0, 0, 0, 0, 0}); !errors.Is(err, ErrUnknown) {
		t.Errorf("code point past U+10FFFF: %v", err)
	}
	b, _ = PutStrings(s2, []string{"a", "bc"})
	if string(b) != "a\x00bc" {
		t.Errorf("bytes %q", b)
	}
	if _, err := Strings(TypeInt32, make([]byte, 4)); !errors.Is(err, ErrUnknown) {
		t.Errorf("int32 as strings: %v", err)
	}
}

func TestUnsupportedMessages(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"struct", "structured"},
	} {
		if _, err := Parse(c.in); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) = %v, want a message with %q", c.in, err, c.want)
		}
	}
	for _, c := range []struct{ in, want string }{
		{"|O", "object elements"},
		{"<M8", "without a unit"},
		{"<M8[fortnight]", "time unit"},
	} {
		if _, _, err := ParseNumpy(c.in); !errors.Is(err, ErrUnknown) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("ParseNumpy(%q) = %v, want a message with %q", c.in, err, c.want)
		}
	}
}
