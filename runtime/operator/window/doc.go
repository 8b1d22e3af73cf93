// Package window is the window operator: it assigns records to tumbling,
// sliding, session and count windows (time windows keep panes of
// gcd(size, slide) per key; sessions merge, then decide lateness), fires
// them when the watermark or the clock passes their end, re-fires them for
// records late within the allowed lateness and sends later ones to the late
// output, and drops their contents after the lateness. With a trigger other
// than that default (Flink's processing-time, count and continuous
// triggers, purging or not) each window of a key keeps its own contents,
// trigger state and timers, as Flink's WindowOperator does
// (triggered.go). Its window function is a built-in aggregate, a UDF
// aggregate or reduce (accumulators the host stores), a UDF window process
// function (with per-window state in the keyed state backends), or a
// window join's two-sided function. The operator owns its snapshot (the
// store's own encoding, restored by key group at any parallelism); the
// default trigger's timers are not stored but derived from the contents.
package window
