package partition

import (
	"testing"
)

// FuzzRoute checks, for any key and worker count, that every kind routes in
// range, that hash agrees with Reduce, and that PKG and D-Choices route a
// key only to its candidates.
func FuzzRoute(f *testing.F) {
	f.Add(uint64(0), uint8(1))
	f.Add(uint64(0xffffffffffffffff), uint8(100))
	f.Add(uint64(0x9e3779b97f4a7c15), uint8(7))
	f.Fuzz(func(t *testing.T, key uint64, nb uint8) {
		n := int(nb)%128 + 1
		probs := map[uint64]float64{key: 0.5}
		for _, kind := range allKinds() {
			p, err := testNew(kind, n, WithDetector(oracleFactory(probs)))
			if err != nil {
				t.Fatal(err)
			}
			for range 3 {
				w := p.Route(key)
				if w < 0 || w >= n {
					t.Fatalf("%s: worker %d out of [0, %d)", kind, w, n)
				}
				switch q := p.(type) {
				case *pkg:
					if c := q.Candidates(nil, key); !contains(c, w) {
						t.Fatalf("pkg: %d not in %v", w, c)
					}
				case *dChoices:
					if c := q.headCandidates(nil, key); !contains(c, w) {
						t.Fatalf("%s: %d not in %v (d=%d)", kind, w, c, q.d)
					}
				}
			}
		}
	})
}

func contains(s []int, x int) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}
