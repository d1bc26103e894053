package dtype

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// The kinds of the extension data types zarr-python 3.4 writes beside the
// core types. Their elements are fixed-size, so they are read and written
// through the same engine as numbers.
const (
	// String is fixed_length_utf32 (NumPy "<U"): n code points, each a
	// UTF-32 unit, zero-padded. Size is 4n bytes.
	String Kind = iota + Raw + 1
	// Bytes is null_terminated_bytes (NumPy "|S"): n bytes, zero-padded.
	Bytes
	// Datetime is numpy.datetime64: an int64 count of Unit×ScaleFactor
	// since 1970-01-01T00:00:00, NaT being math.MinInt64.
	Datetime
	// Timedelta is numpy.timedelta64: an int64 count of Unit×ScaleFactor.
	Timedelta
	// BFloat is bfloat16: the top 16 bits of a float32.
	BFloat
)

// NaT is the int64 value of NumPy's "not a time" in datetime64 and
// timedelta64 arrays, and their usual fill value.
const NaT int64 = -1 << 63

// TypeBFloat16 is bfloat16 (zarr-extensions "bfloat16").
var TypeBFloat16 = DataType{kind: BFloat, size: 2}

// TimeUnit is a NumPy datetime64/timedelta64 unit.
type TimeUnit uint8

// The NumPy time units, from years to attoseconds.
const (
	Years TimeUnit = iota + 1
	Months
	Weeks
	Days
	Hours
	Minutes
	Seconds
	Milliseconds
	Microseconds
	Nanoseconds
	Picoseconds
	Femtoseconds
	Attoseconds
)

var unitNames = [...]string{"", "Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as"}

// String returns NumPy's code for the unit: "Y", "D", "s", "ns", ...
func (u TimeUnit) String() string {
	if int(u) < len(unitNames) && u != 0 {
		return unitNames[u]
	}
	return "invalid"
}

// ParseTimeUnit parses a NumPy time unit code ("μs" is read as "us").
func ParseTimeUnit(s string) (TimeUnit, error) {
	if s == "μs" {
		s = "us"
	}
	for i, n := range unitNames {
		if i > 0 && n == s {
			return TimeUnit(i), nil
		}
	}
	return 0, fmt.Errorf("%w: time unit %q", ErrUnknown, s)
}

// maxScale bounds a time type's scale factor (NumPy stores it in an int32).
const maxScale = 1<<31 - 1

// maxFixedBytes bounds the element size of the fixed-width string types,
// as RawBits bounds raw types.
const maxFixedBytes = 1 << 17

// FixedUTF32 returns fixed_length_utf32 of n code points (NumPy "<Un").
func FixedUTF32(n int) (DataType, error) {
	if n <= 0 || n > maxFixedBytes/4 {
		return DataType{}, fmt.Errorf("%w: fixed_length_utf32 of %d code points (want 1..%d)", ErrUnknown, n, maxFixedBytes/4)
	}
	return DataType{kind: String, size: 4 * n}, nil
}

// FixedBytes returns null_terminated_bytes of n bytes (NumPy "|Sn").
func FixedBytes(n int) (DataType, error) {
	if n <= 0 || n > maxFixedBytes {
		return DataType{}, fmt.Errorf("%w: null_terminated_bytes of %d bytes (want 1..%d)", ErrUnknown, n, maxFixedBytes)
	}
	return DataType{kind: Bytes, size: n}, nil
}

// Datetime64 returns numpy.datetime64 with the given unit and scale factor
// (1 for plain units; NumPy's "M8[10s]" is Seconds, 10).
func Datetime64(u TimeUnit, scale int) (DataType, error) { return timeType(Datetime, u, scale) }

// Timedelta64 returns numpy.timedelta64 with the given unit and scale factor.
func Timedelta64(u TimeUnit, scale int) (DataType, error) { return timeType(Timedelta, u, scale) }

func timeType(k Kind, u TimeUnit, scale int) (DataType, error) {
	if u.String() == "invalid" {
		return DataType{}, fmt.Errorf("%w: time unit %d", ErrUnknown, u)
	}
	if scale < 1 || scale > maxScale {
		return DataType{}, fmt.Errorf("%w: scale factor %d (want 1..%d)", ErrUnknown, scale, maxScale)
	}
	return DataType{kind: k, size: 8, unit: u, scale: uint32(scale)}, nil
}

// TimeUnit returns the unit and scale factor of a datetime64 or timedelta64
// type, and 0, 0 for any other.
func (d DataType) TimeUnit() (TimeUnit, int) { return d.unit, int(d.scale) }

// Chars returns the number of code points of a fixed_length_utf32 type, or
// bytes of a null_terminated_bytes type; 0 for any other.
func (d DataType) Chars() int {
	switch d.kind {
	case String:
		return d.size / 4
	case Bytes:
		return d.size
	}
	return 0
}

// extName returns the v3 name of an extension type, "" for core types.
func (d DataType) extName() string {
	switch d.kind {
	case String:
		return "fixed_length_utf32"
	case Bytes:
		return "null_terminated_bytes"
	case Datetime:
		return "numpy.datetime64"
	case Timedelta:
		return "numpy.timedelta64"
	case BFloat:
		return "bfloat16"
	case NarrowFloat, NarrowInt, NarrowUint:
		return d.narrowFormat().name
	}
	return d.varName()
}

// describe returns a name with the type's parameters, for messages.
func (d DataType) describe() string {
	switch d.kind {
	case String, Bytes:
		return d.extName() + "[" + strconv.Itoa(d.Chars()) + "]"
	case Datetime, Timedelta:
		return d.extName() + "[" + d.timeSuffix() + "]"
	}
	return d.Name()
}

func (d DataType) timeSuffix() string {
	if d.scale == 1 {
		return d.unit.String()
	}
	return strconv.Itoa(int(d.scale)) + d.unit.String()
}

// Configuration returns the Zarr v3 data_type configuration of d as
// zarr-python 3.4 writes it ({"length_bytes": n}, {"unit": "s",
// "scale_factor": 1}), or nil for types written as a bare name.
func (d DataType) Configuration() json.RawMessage {
	switch d.kind {
	case String, Bytes:
		return json.RawMessage(`{"length_bytes":` + strconv.Itoa(d.size) + `}`)
	case Datetime, Timedelta:
		return json.RawMessage(`{"unit":` + strconv.Quote(d.unit.String()) + `,"scale_factor":` + strconv.Itoa(int(d.scale)) + `}`)
	}
	return nil
}

// ParseExtension returns the extension data type a Zarr v3 data_type of
// the given name and configuration (nil when absent) describes:
// fixed_length_utf32 and null_terminated_bytes with {"length_bytes": n},
// numpy.datetime64 and numpy.timedelta64 with {"unit", "scale_factor"}
// (zarr-extensions' "datetime64"/"timedelta64" too), and bfloat16 with no
// configuration. ok is false when the name is none of these; errors wrap
// ErrUnknown.
func ParseExtension(name string, cfg json.RawMessage) (d DataType, ok bool, err error) {
	bad := func(format string, args ...any) (DataType, bool, error) {
		return DataType{}, true, fmt.Errorf("%w: data_type %s: %s", ErrUnknown, name, fmt.Sprintf(format, args...))
	}
	strict := func(v any) error {
		dec := json.NewDecoder(bytes.NewReader(cfg))
		dec.DisallowUnknownFields()
		return dec.Decode(v)
	}
	switch name {
	case "fixed_length_utf32", "null_terminated_bytes":
		var c struct {
			LengthBytes *int64 `json:"length_bytes"`
		}
		if cfg == nil || strict(&c) != nil || c.LengthBytes == nil {
			return bad("want configuration {\"length_bytes\": n}")
		}
		n := *c.LengthBytes
		if n <= 0 || n > maxFixedBytes || (name == "fixed_length_utf32" && n%4 != 0) {
			return bad("length_bytes %d out of range", n)
		}
		if name == "fixed_length_utf32" {
			d, err = FixedUTF32(int(n / 4))
		} else {
			d, err = FixedBytes(int(n))
		}
		return d, true, err
	case "numpy.datetime64", "numpy.timedelta64", "datetime64", "timedelta64":
		var c struct {
			Unit        *string `json:"unit"`
			ScaleFactor *int64  `json:"scale_factor"`
		}
		if cfg == nil || strict(&c) != nil || c.Unit == nil {
			return bad("want configuration {\"unit\": u, \"scale_factor\": n}")
		}
		u, err := ParseTimeUnit(*c.Unit)
		if err != nil {
			return bad("unit %q", *c.Unit)
		}
		scale := int64(1)
		if c.ScaleFactor != nil {
			scale = *c.ScaleFactor
		}
		if scale < 1 || scale > maxScale {
			return bad("scale_factor %d out of range", scale)
		}
		if strings.HasSuffix(name, "datetime64") {
			d, err = Datetime64(u, int(scale))
		} else {
			d, err = Timedelta64(u, int(scale))
		}
		return d, true, err
	case "bfloat16":
		if cfg != nil && string(bytes.Join(bytes.Fields(cfg), nil)) != "{}" {
			return bad("takes no configuration")
		}
		return TypeBFloat16, true, nil
	}
	return DataType{}, false, nil
}

// parseNumpyTime parses the rest of a NumPy "M8[...]"/"m8[...]" descriptor
// after the kind code and the 8: "[s]", "[10ns]", "[us]".
func parseNumpyTime(k Kind, rest string) (DataType, error) {
	inner, ok := strings.CutPrefix(rest, "[")
	if !ok || !strings.HasSuffix(inner, "]") {
		return DataType{}, fmt.Errorf("%w: want a unit in brackets, as in M8[ns]", ErrUnknown)
	}
	inner = strings.TrimSuffix(inner, "]")
	i := 0
	for i < len(inner) && inner[i] >= '0' && inner[i] <= '9' {
		i++
	}
	scale := 1
	if i > 0 {
		n, err := strconv.Atoi(inner[:i])
		if err != nil || strconv.Itoa(n) != inner[:i] {
			return DataType{}, fmt.Errorf("%w: bad scale factor %q", ErrUnknown, inner[:i])
		}
		scale = n
	}
	u, err := ParseTimeUnit(inner[i:])
	if err != nil {
		return DataType{}, err
	}
	return timeType(k, u, scale)
}
