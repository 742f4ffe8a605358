package bench

import "github.com/skewerhq/skewer/stream"

// genSource is one runtime source reading from a shared Generator: it
// implements stream.Stream, filling dst from the generator's batches and
// returning fewer records only once the generator has finished. When the
// generator keeps no schedule (rate 0) it stamps records with the time it
// takes them, their entry into the system.
type genSource struct {
	g   *Generator
	cur []stream.Record
	pos int
}

// Fill implements stream.Stream.
func (s *genSource) Fill(dst []stream.Record) int {
	n := 0
	for n < len(dst) {
		if s.pos == len(s.cur) {
			if s.cur != nil {
				s.g.Release(s.cur)
				s.cur, s.pos = nil, 0
			}
			b := s.g.Next()
			if b == nil {
				break
			}
			s.cur, s.pos = b, 0
			if !s.g.Stamp() {
				s.g.stamp(b, s.g.Now())
			}
		}
		c := copy(dst[n:], s.cur[s.pos:])
		s.pos += c
		n += c
	}
	return n
}
