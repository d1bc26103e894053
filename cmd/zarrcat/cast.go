package main

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/gozarr/gozarr/dtype"
	"github.com/gozarr/gozarr/nd"
)

// errCast reports a value the destination data type cannot hold.
var errCast = dtype.ErrDoesNotFit

// castValues converts elements from one real data type to another; the
// same type returns data itself.
func castValues(from, to dtype.DataType, data []byte) ([]byte, error) {
	if from == to {
		return data, nil
	}
	for _, dt := range []dtype.DataType{from, to} {
		if k := dt.Kind(); k != dtype.Bool && k != dtype.Int && k != dtype.Uint && k != dtype.Float {
			return nil, fmt.Errorf("%w: --dtype casts between booleans, integers and real floats, not %s", errUsage, dt)
		}
	}
	fs, ts := from.Size(), to.Size()
	out := make([]byte, len(data)/fs*ts)
	for i, j := 0, 0; i < len(data); i, j = i+fs, j+ts {
		v, err := dtype.NumberOf(from, data[i:i+fs])
		if err == nil {
			err = v.Put(to, out[j:j+ts])
		}
		if err != nil {
			return nil, &castError{i: i / fs, err: err}
		}
	}
	return out, nil
}

// castError is a value castValues cannot convert: element i of the data.
type castError struct {
	i   int
	err error
}

func (e *castError) Error() string { return e.err.Error() }
func (e *castError) Unwrap() error { return e.err }

// castCoords shows the array coordinates of the element a castError
// names inside the box sel (C order): " at [3, 5]", or "".
func castCoords(err error, sel nd.Selection) string {
	var ce *castError
	if !errors.As(err, &ce) {
		return ""
	}
	out := make([]int, len(sel))
	i := ce.i
	for d := len(sel) - 1; d >= 0; d-- {
		c := max(sel[d].Count, 1)
		out[d] = sel[d].Start + i%c*sel[d].Step
		i /= c
	}
	parts := make([]string, len(out))
	for d, v := range out {
		parts[d] = strconv.Itoa(v)
	}
	return " at [" + strings.Join(parts, ", ") + "]"
}
