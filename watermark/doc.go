// Package watermark owns event time: watermark strategies, the per-channel
// minimum (the valve) with idleness, and the timer service. Watermarks move
// in-band through the exchange as control events.
package watermark
