package connector

// rng is a splitmix64 generator. The generator seeds one per record from the
// source's seed and the record's global index, so a record does not depend
// on which subtask produces it or what came before.
type rng uint64

const golden = 0x9e3779b97f4a7c15

func mix64(z uint64) uint64 {
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31
}

func newRNG(seed uint64, index int64) rng {
	return rng(mix64(seed*golden ^ mix64(uint64(index)+golden)))
}

func (r *rng) next() uint64 {
	*r += golden
	return mix64(uint64(*r))
}

// intn returns a number in [0, n); n must be positive.
func (r *rng) intn(n int) int { return int(r.next() % uint64(n)) }
