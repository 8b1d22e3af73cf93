// Package join is the interval join operator (Flink's IntervalJoinOperator):
// it buffers both inputs by key, within the state budget, joins each record
// with the other side's records in [lower, upper] of its time through the
// join or co_group function (or as built-in pairs), drops buffered records
// once the watermark passes the last time they can match, and sends records
// below the watermark (less the allowed lateness) to the late output. It
// owns its snapshot: both sides' buffers and the watermark, restored by key
// group. Window joins are window operators (package window).
package join
