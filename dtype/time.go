package dtype

import (
	"fmt"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// unitSeconds is how many seconds one unit is for the units from weeks to
// seconds, and fracDigits how many decimal digits a second has in the
// sub-second units.
var (
	unitSeconds = map[TimeUnit]int64{Weeks: 7 * 86400, Days: 86400, Hours: 3600, Minutes: 60, Seconds: 1}
	fracDigits  = map[TimeUnit]int{Milliseconds: 3, Microseconds: 6, Nanoseconds: 9, Picoseconds: 12, Femtoseconds: 15, Attoseconds: 18}
)

func mulCheck(a, b int64) (int64, bool) {
	neg := (a < 0) != (b < 0)
	ua, ub := uint64(a), uint64(b)
	if a < 0 {
		ua = -ua
	}
	if b < 0 {
		ub = -ub
	}
	hi, lo := bits.Mul64(ua, ub)
	if hi != 0 || lo > 1<<63-1 {
		return 0, false
	}
	if neg {
		return -int64(lo), true
	}
	return int64(lo), true
}

func floorDivMod(a, b int64) (int64, int64) {
	q, r := a/b, a%b
	if r < 0 {
		q, r = q-1, r+b
	}
	return q, r
}

func pow10(n int) int64 {
	p := int64(1)
	for range n {
		p *= 10
	}
	return p
}

// timeParts splits a count of d's units into whole seconds since the
// epoch and a fraction of fracDigits digits; months and years are the
// caller's (ok false).
func timeParts(d DataType, v int64) (sec, frac int64, digits int, ok bool) {
	total, ok := mulCheck(v, int64(d.scale))
	if !ok {
		return 0, 0, 0, false
	}
	if s, isSec := unitSeconds[d.unit]; isSec {
		sec, ok = mulCheck(total, s)
		return sec, 0, 0, ok
	}
	digits, ok = fracDigits[d.unit]
	if !ok {
		return 0, 0, 0, false
	}
	sec, frac = floorDivMod(total, pow10(digits))
	return sec, frac, digits, true
}

// Time returns element v of a datetime64 type as a UTC time.Time; ok is
// false for NaT, for a type that is not datetime64, and for counts that
// time.Time cannot hold (sub-nanosecond precision is cut).
func (d DataType) Time(v int64) (t time.Time, ok bool) {
	if d.kind != Datetime || v == NaT {
		return time.Time{}, false
	}
	switch d.unit {
	case Years, Months:
		total, ok := mulCheck(v, int64(d.scale))
		if !ok || total > 1<<40 || total < -(1<<40) {
			return time.Time{}, false
		}
		if d.unit == Years {
			total *= 12
		}
		y, m := floorDivMod(total, 12)
		return time.Date(int(1970+y), time.Month(m+1), 1, 0, 0, 0, 0, time.UTC), true
	}
	sec, frac, digits, ok := timeParts(d, v)
	if !ok {
		return time.Time{}, false
	}
	ns := frac
	if digits > 9 {
		ns = frac / pow10(digits-9)
	} else {
		ns = frac * pow10(9-digits)
	}
	return time.Unix(sec, ns).UTC(), true
}

// Duration returns element v of a timedelta64 type as a time.Duration;
// ok is false for NaT, months and years (no fixed length), a type that is
// not timedelta64 and durations out of time.Duration's range.
func (d DataType) Duration(v int64) (time.Duration, bool) {
	if d.kind != Timedelta || v == NaT || d.unit == Years || d.unit == Months {
		return 0, false
	}
	sec, frac, digits, ok := timeParts(d, v)
	if !ok {
		return 0, false
	}
	ns, ok := mulCheck(sec, 1e9)
	if !ok {
		return 0, false
	}
	if digits > 9 {
		frac /= pow10(digits - 9)
	} else {
		frac *= pow10(9 - digits)
	}
	if ns > 0 && frac > 1<<63-1-ns {
		return 0, false
	}
	return time.Duration(ns + frac), true
}

// FromTime returns t as a count of the units of datetime64 type d, rounded
// toward the past. Times d cannot hold are an error wrapping ErrUnknown.
func (d DataType) FromTime(t time.Time) (int64, error) {
	if d.kind != Datetime {
		return 0, fmt.Errorf("%w: %s is not a datetime64 type", ErrUnknown, d)
	}
	t = t.UTC()
	var total int64
	switch d.unit {
	case Years:
		total = int64(t.Year() - 1970)
	case Months:
		total = int64(t.Year()-1970)*12 + int64(t.Month()-1)
	default:
		sec, ns := t.Unix(), int64(t.Nanosecond())
		if s, ok := unitSeconds[d.unit]; ok {
			total, _ = floorDivMod(sec, s)
			break
		}
		digits := fracDigits[d.unit]
		var ok bool
		if total, ok = mulCheck(sec, pow10(digits)); ok {
			var f int64
			if digits >= 9 {
				f, ok = mulCheck(ns, pow10(digits-9))
			} else {
				f = ns / pow10(9-digits)
			}
			if ok && (total < 0 || f <= 1<<63-1-total) {
				total += f
			} else {
				ok = false
			}
		}
		if !ok {
			return 0, fmt.Errorf("%w: %s out of the range of %s", ErrUnknown, t.Format(time.RFC3339Nano), d)
		}
	}
	q, _ := floorDivMod(total, int64(d.scale))
	if q == NaT {
		return 0, fmt.Errorf("%w: %s out of the range of %s", ErrUnknown, t.Format(time.RFC3339Nano), d)
	}
	return q, nil
}

// FormatTime formats element v of a datetime64 or timedelta64 type the way
// NumPy prints it: datetimes in ISO 8601 at the unit's precision
// ("2020-01", "2020-01-01", "2020-01-01T12:30", "1970-01-01T00:00:00.000000005"),
// timedeltas as a count of the unit ("5 ns", "30 s" for 3 of 10s), and "NaT". A datetime
// out of the representable range is printed as its count and unit.
func FormatTime(d DataType, v int64) string {
	if v == NaT {
		return "NaT"
	}
	count := func() string {
		if total, ok := mulCheck(v, int64(d.scale)); ok {
			return strconv.FormatInt(total, 10) + " " + d.unit.String()
		}
		return strconv.FormatInt(v, 10) + "*" + strconv.Itoa(int(d.scale)) + " " + d.unit.String()
	}
	if d.kind != Datetime {
		return count()
	}
	switch d.unit {
	case Years, Months:
		t, ok := d.Time(v)
		if !ok {
			return count()
		}
		if d.unit == Years {
			return strconv.Itoa(t.Year())
		}
		return fmt.Sprintf("%04d-%02d", t.Year(), int(t.Month()))
	}
	sec, frac, digits, ok := timeParts(d, v)
	if !ok || sec > 1<<55 || sec < -(1<<55) {
		return count()
	}
	t := time.Unix(sec, 0).UTC()
	var layout string
	switch d.unit {
	case Weeks, Days:
		layout = "2006-01-02"
	case Hours:
		layout = "2006-01-02T15"
	case Minutes:
		layout = "2006-01-02T15:04"
	default:
		layout = "2006-01-02T15:04:05"
	}
	s := t.Format(layout)
	if digits > 0 {
		f := strconv.FormatInt(frac, 10)
		s += "." + strings.Repeat("0", digits-len(f)) + f
	}
	return s
}
