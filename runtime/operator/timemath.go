package operator

import "math"

// AddTime is a + b in milliseconds, saturated to the int64 range: a window
// end, a cleanup time or an expiry past the range of event time is the end
// (or the beginning) of time instead of wrapping around, as Flink caps a
// window's cleanup time at Long.MAX_VALUE.
func AddTime(a, b int64) int64 {
	s := a + b
	switch {
	case b > 0 && s < a:
		return math.MaxInt64
	case b < 0 && s > a:
		return math.MinInt64
	}
	return s
}

// SubTime is a - b, saturated as AddTime.
func SubTime(a, b int64) int64 {
	s := a - b
	switch {
	case b > 0 && s > a:
		return math.MinInt64
	case b < 0 && s < a:
		return math.MaxInt64
	}
	return s
}
