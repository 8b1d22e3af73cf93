// Package bench holds the platform's experiments, which measure and write
// their figures into docs/PERFORMANCE.md and their plots into docs/:
//
//   - the backpressure experiment of the seeds: a producer task at 60% of
//     full speed sends through the credit-based exchange to a consumer task
//     that is slowed to 30% and released, twice; the producer's rate
//     follows the consumer's and memory stays flat;
//   - the latency and throughput of one exchange edge for buffer_timeout 0,
//     1 ms, 10 ms and 100 ms.
//
// They run only when asked, so that `go test ./...` stays fast:
//
//	go test ./bench -run Experiment -experiment -v
//
// (`make experiments` does the same).
package bench
