package sim

import "math/rand/v2"

// NewRand returns a PCG generator for the stream (seed, stream). Streams
// with different ids are independent for all practical purposes (O'Neill
// 2014, PCG: "A Family of Simple Fast Space-Efficient Statistically Good
// Algorithms for Random Number Generation").
func NewRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// StreamID hashes an identity (a name such as "check/draft" and integer
// keys such as the trial index) into a stream id: FNV-1a over the name,
// then each key mixed in with the splitmix64 finaliser. The same identity
// always gives the same id, so any trial can be replayed alone.
func StreamID(name string, keys ...uint64) uint64 {
	h := uint64(14695981039346656037)
	for i := 0; i < len(name); i++ {
		h ^= uint64(name[i])
		h *= 1099511628211
	}
	for _, k := range keys {
		h = mix64(h ^ mix64(k+0x9e3779b97f4a7c15))
	}
	return h
}

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Stream is a reusable generator for keyed streams: Reset(seed, stream)
// returns a *rand.Rand that produces exactly the numbers of
// NewRand(seed, stream), without allocating. Hot Monte Carlo loops keep
// one Stream per worker (or per chunk) and reset it for every trial.
type Stream struct {
	pcg rand.PCG
	rng *rand.Rand
}

// NewStream returns a Stream; Reset it before use.
func NewStream() *Stream {
	s := &Stream{}
	s.rng = rand.New(&s.pcg)
	return s
}

// Reset re-seeds the stream to (seed, stream) and returns its generator.
func (s *Stream) Reset(seed, stream uint64) *rand.Rand {
	s.pcg.Seed(seed, stream)
	return s.rng
}
