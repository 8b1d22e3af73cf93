//go:build wasip1

package main

import udf "wasmstream.io/platform/sdk/go"

// importTimerRegister is the platform's timer import, called directly: the
// SDK refuses timers in window process functions before the platform does.
//
//go:wasmimport platform timer_register
func importTimerRegister(domain uint32, ts int64)

func init() {
	udf.ProcessWindow("rearm", rearm)
}

// rearm is deliberately wrong, for the platform's tests: it registers an
// event-time timer at the window's end, which a window process function may
// not do, so the platform fails its call.
func rearm(_ []byte, w udf.Window, _ []udf.Record, _ func(udf.Record)) error {
	importTimerRegister(uint32(udf.EventTime), w.End)
	return nil
}
