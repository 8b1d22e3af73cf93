// Package watermark owns event time: watermark strategies, the per-channel
// minimum (the valve) with idleness, and the timer service. Watermarks and
// idleness move in-band through the exchange as its control events
// (exchange.Watermark, exchange.Idle in runtime/exchange); the valve combines
// what arrives on each channel.
//
// Nothing here is safe for concurrent use: a valve, a generator or a timer
// service belongs to the goroutine of the task that owns it.
package watermark
