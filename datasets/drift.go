package datasets

import (
	"math/bits"
	"math/rand/v2"

	"github.com/skewerhq/skewer/internal/hashx"
	"github.com/skewerhq/skewer/stream"
)

// DriftMode says how the hot set moves at each drift point.
type DriftMode int

const (
	// DriftRotate rotates the rank->key mapping by Shift ranks at each drift
	// point: after e drifts the key of rank r is the key that had rank
	// r + e*Shift (mod K) at the start, so with Shift = 1 the second hottest
	// key becomes the hottest.
	DriftRotate DriftMode = iota
	// DriftRedraw draws a new pseudo-random permutation of the same K keys
	// at each drift point (an affine map r -> a*r + b mod K with a coprime
	// to K, seeded per epoch): the hot set jumps anywhere.
	DriftRedraw
)

// DriftConfig configures a drifting Zipf stream.
type DriftConfig struct {
	K      uint64    // number of keys, in [1, MaxZipfKeys]
	S      float64   // Zipf exponent, >= 0
	N      int64     // number of records, >= 0
	Period int64     // records per epoch: the mapping changes every Period records, >= 1
	Shift  uint64    // ranks rotated per drift (DriftRotate), in [1, K) when K > 1
	Mode   DriftMode // DriftRotate or DriftRedraw
	// Seed drives sampling only: which rank each record draws.
	Seed uint64
	// DriftSeed selects where the hot set moves: the permutation of each
	// epoch under DriftRedraw (unused by DriftRotate). It is separate from
	// Seed so that streams sampled with different seeds (one per source)
	// share their hot set in every epoch.
	DriftSeed uint64
}

// Drift is a Zipf stream whose hot set moves: records [e*Period,
// (e+1)*Period) form epoch e, ranks are drawn as for Zipf, and the rank->key
// mapping of epoch e is changed as Mode says. Epoch 0 maps ranks to keys
// exactly as NewZipf(K, S, N, Seed) does. Keys depend on K, Mode, Shift,
// Period and DriftSeed, never on Seed. KeyAt and RankAt give the mapping
// of any epoch, for tests of adaptive hot-key detection.
//
// The zero Drift is not usable; build one with NewDrift.
type Drift struct {
	cfg   DriftConfig
	z     zipfSampler
	src   rand.PCG
	keys  keyMap
	pos   int64
	epoch int64
	left  int64      // records left in the current epoch
	perm  affinePerm // the current epoch's rank permutation
}

// NewDrift returns a drifting Zipf stream. It fails with ErrInvalidParameter
// naming the field of cfg that is out of range.
func NewDrift(cfg DriftConfig) (*Drift, error) {
	z, err := newZipfSampler(cfg.K, cfg.S)
	if err != nil {
		return nil, err
	}
	if err := checkLength(cfg.N); err != nil {
		return nil, err
	}
	if cfg.Period < 1 {
		return nil, invalidParam("Period", cfg.Period, ">= 1 (records per epoch)")
	}
	switch cfg.Mode {
	case DriftRotate:
		if cfg.K > 1 && (cfg.Shift == 0 || cfg.Shift >= cfg.K) {
			return nil, invalidParam("Shift", cfg.Shift, "in [1, K) (ranks rotated per drift)")
		}
	case DriftRedraw:
	default:
		return nil, invalidParam("Mode", cfg.Mode, "DriftRotate or DriftRedraw")
	}
	d := &Drift{cfg: cfg, z: z, keys: newKeyMap(cfg.K)}
	d.Reset()
	return d, nil
}

// Fill implements stream.Stream. Records carry no event time.
func (d *Drift) Fill(dst []stream.Record) int {
	m := int64(len(dst))
	if left := d.cfg.N - d.pos; left < m {
		m = left
	}
	dst = dst[:m]
	for len(dst) > 0 {
		if d.left == 0 {
			d.epoch++
			d.left = d.cfg.Period
			d.perm = d.permFor(d.epoch)
		}
		run := dst[:min(int64(len(dst)), d.left)]
		for i := range run {
			run[i] = stream.Record{Key: d.keys.key(d.perm.apply(d.z.sample(&d.src) - 1))}
		}
		d.left -= int64(len(run))
		dst = dst[len(run):]
	}
	d.pos += m
	return int(m)
}

// Epoch returns the epoch of the record at position i (0-based).
func (d *Drift) Epoch(i int64) int64 { return i / d.cfg.Period }

// KeyAt returns the key of rank r (1 = hottest) during epoch e.
func (d *Drift) KeyAt(r uint64, e int64) uint64 {
	return d.keys.key(d.permFor(e).apply(r - 1))
}

// RankAt returns the rank of key during epoch e, and false for a key that
// is not one of the stream's K keys.
func (d *Drift) RankAt(key uint64, e int64) (uint64, bool) {
	slot, ok := d.keys.slot(key)
	if !ok {
		return 0, false
	}
	return d.permFor(e).invert(slot) + 1, true
}

// Len returns the number of records the stream yields in all.
func (d *Drift) Len() int64 { return d.cfg.N }

// Reset rewinds the stream to its first record.
func (d *Drift) Reset() {
	d.src = newPCG(d.cfg.Seed)
	d.pos, d.epoch, d.left = 0, 0, d.cfg.Period
	d.perm = d.permFor(0)
}

// permFor returns the rank permutation of epoch e.
func (d *Drift) permFor(e int64) affinePerm {
	k := d.cfg.K
	if e == 0 || k == 1 {
		return affinePerm{a: 1, k: k}
	}
	if d.cfg.Mode == DriftRotate {
		// e*Shift mod K without overflow.
		hi, lo := bits.Mul64(uint64(e), d.cfg.Shift)
		_, off := bits.Div64(hi%k, lo, k)
		return affinePerm{a: 1, b: off, k: k}
	}
	// DriftSeed ^ 1 keeps the command line's default drift stream (DriftSeed
	// 0, Seed 1) the one the docs' figures come from.
	src := newPCG(hashx.Mix64((d.cfg.DriftSeed ^ 1) ^ uint64(e)*0x9e3779b97f4a7c15))
	var a uint64
	for {
		a = 1 + uint64N(&src, k-1)
		if gcd(a, k) == 1 {
			break
		}
	}
	return affinePerm{a: a, b: uint64N(&src, k), k: k}
}

// affinePerm is the bijection x -> (a*x + b) mod k on [0, k), gcd(a, k) = 1.
type affinePerm struct{ a, b, k uint64 }

func (p affinePerm) apply(x uint64) uint64 {
	if p.a == 1 {
		y := x + p.b
		if y >= p.k {
			y -= p.k
		}
		return y
	}
	hi, lo := bits.Mul64(p.a, x)
	_, ax := bits.Div64(hi, lo, p.k) // hi < k because a, x < k
	y := ax + p.b
	if y >= p.k {
		y -= p.k
	}
	return y
}

func (p affinePerm) invert(y uint64) uint64 {
	// x = a^-1 * (y - b) mod k.
	d := y - p.b
	if y < p.b {
		d = y + (p.k - p.b)
	}
	if p.a == 1 {
		return d
	}
	hi, lo := bits.Mul64(modInverse(p.a, p.k), d)
	_, x := bits.Div64(hi, lo, p.k)
	return x
}

func gcd(a, b uint64) uint64 {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// modInverse returns a^-1 mod k for gcd(a, k) = 1, by the extended Euclidean
// algorithm on signed 128-bit-free coefficients (k < 2^63 suffices: k <=
// MaxZipfKeys).
func modInverse(a, k uint64) uint64 {
	t, newT := int64(0), int64(1)
	r, newR := int64(k), int64(a)
	for newR != 0 {
		q := r / newR
		t, newT = newT, t-q*newT
		r, newR = newR, r-q*newR
	}
	if t < 0 {
		t += int64(k)
	}
	return uint64(t)
}
