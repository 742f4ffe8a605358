package nexmark

import (
	"math/bits"
	"strconv"
	"strings"
	"sync"

	"github.com/skewerhq/skewer/internal/hashx"
)

// The reference's small vocabularies: few states and cities so that the
// queries that filter on them find matches in short runs.
var (
	usStates   = [...]string{"AZ", "CA", "ID", "OR", "WA", "WY"}
	usCities   = [...]string{"Phoenix", "Los Angeles", "San Francisco", "Boise", "Portland", "Bend", "Redmond", "Seattle", "Kent", "Cheyenne"}
	firstNames = [...]string{"Peter", "Paul", "Luke", "John", "Saul", "Vicky", "Kate", "Julie", "Sarah", "Deiter", "Walter"}
	lastNames  = [...]string{"Shultz", "Abrams", "Spencer", "White", "Bartels", "Walton", "Smith", "Jones", "Noris"}
	hotChannel = [...]string{"Google", "Facebook", "Baidu", "Apple"}
)

const (
	numEmails   = 1 << 12          // the email table
	numCards    = 1 << 16          // distinct credit card numbers
	numChannels = 10_000           // the reference's CHANNELS_NUMBER
	textLen     = 1 << 16          // the shared texts of names, descriptions and padding
	minStrLen   = 3                // the reference's MIN_STRING_LENGTH
	vocabSeed   = 0x6e65786d61726b // "nexmark": the tables do not depend on Config.Seed
)

// vocab holds the tables every generator reads: built once per process,
// on the first New, and read-only after.
type vocab struct {
	names    [len(firstNames) * len(lastNames)]string // "First Last"
	emails   [numEmails]string
	cards    string // numCards+3 groups "dddd " : card k is cards[5k : 5k+19]
	words    string // letters with a space one time in 13: item names, descriptions
	letters  string // letters only: Extra padding
	hotURLs  [len(hotChannel)]string
	channels [numChannels]string // "channel-i"
	urls     [numChannels]string
}

var loadVocab = sync.OnceValue(buildVocab)

// rng is SplitMix64: a counter mixed by hashx.Mix64. A generator seeds one
// per event from (seed, event number), which is what makes events random
// access.
type rng struct{ s uint64 }

const golden = 0x9e3779b97f4a7c15

func (r *rng) next() uint64 {
	r.s += golden
	return hashx.Mix64(r.s)
}

// intn is uniform in [0, n), n > 0 (Lemire's multiply-shift).
func (r *rng) intn(n int) int { return hashx.Reduce(r.next(), n) }

// int63n is uniform in [0, n), n > 0.
func (r *rng) int63n(n int64) int64 {
	hi, _ := bits.Mul64(r.next(), uint64(n))
	return int64(hi)
}

// float is uniform in [0, 1) with 53 random bits.
func (r *rng) float() float64 { return float64(r.next()>>11) * 0x1p-53 }

// appendString appends the reference's random string: 3 to maxLen-1
// characters, each special with probability 1/13, else a lower-case
// letter, with leading and trailing spaces trimmed.
func appendString(dst []byte, r *rng, maxLen int, special byte) []byte {
	n := minStrLen + r.intn(maxLen-minStrLen)
	start := len(dst)
	for range n {
		dst = append(dst, randChar(r, special))
	}
	s := strings.TrimSpace(string(dst[start:]))
	return append(dst[:start], s...)
}

func randChar(r *rng, special byte) byte {
	if r.intn(13) == 0 {
		return special
	}
	return byte('a' + r.intn(26))
}

func buildVocab() *vocab {
	v := &vocab{}
	r := &rng{s: vocabSeed}
	for i, f := range firstNames {
		for j, l := range lastNames {
			v.names[i*len(lastNames)+j] = f + " " + l
		}
	}
	for i := range v.emails {
		b := appendString(nil, r, 7, ' ')
		b = append(b, '@')
		b = appendString(b, r, 5, ' ')
		v.emails[i] = string(append(b, ".com"...))
	}
	cards := make([]byte, 0, (numCards+3)*5)
	for range numCards + 3 {
		d := r.intn(10000)
		cards = append(cards, byte('0'+d/1000), byte('0'+d/100%10), byte('0'+d/10%10), byte('0'+d%10), ' ')
	}
	v.cards = string(cards)
	words, letters := make([]byte, textLen), make([]byte, textLen)
	for i := range words {
		words[i] = randChar(r, ' ')
		letters[i] = byte('a' + r.intn(26))
	}
	v.words, v.letters = string(words), string(letters)
	for i := range v.hotURLs {
		v.hotURLs[i] = baseURL(r)
	}
	for i := range v.channels {
		v.channels[i] = "channel-" + strconv.Itoa(i)
		u := baseURL(r)
		if r.intn(10) > 0 {
			id := int32(bits.Reverse32(uint32(i)))
			if id < 0 {
				id = -id // the reference's Math.abs(Integer.reverse(i)); never MinInt32 for i < 10^4
			}
			u += "&channel_id=" + strconv.Itoa(int(id))
		}
		v.urls[i] = u
	}
	return v
}

// baseURL is the reference's random item URL.
func baseURL(r *rng) string {
	b := []byte("https://www.nexmark.com/")
	for range 3 {
		b = appendString(b, r, 5, '_')
		b = append(b, '/')
	}
	return string(append(b, "item.htm?query=1"...))
}

// card returns credit card k: four consecutive digit groups.
func (v *vocab) card(k int) string { return v.cards[5*k : 5*k+19] }

// text returns the reference's random string of up to maxLen-1
// characters as a substring of the shared words text (no allocation).
func (v *vocab) text(r *rng, maxLen int) string {
	n := minStrLen + r.intn(maxLen-minStrLen)
	off := r.intn(len(v.words) - n + 1)
	return strings.TrimSpace(v.words[off : off+n])
}

// extra returns padding such that size + len(extra) averages avg, with
// the reference's rule: 0 when size > avg, else a length uniform within
// +-20% of avg - size; a substring of the shared letters text. Length and
// offset share one 64-bit draw.
func (v *vocab) extra(r *rng, size, avg int) string {
	if size > avg {
		return ""
	}
	want := avg - size
	delta := (want + 2) / 5 // round(want * 0.2)
	n := want - delta
	x := r.next()
	if delta > 0 {
		n += reduce32(x, 2*delta)
	}
	off := reduce32(x>>32, len(v.letters)-n+1)
	return v.letters[off : off+n]
}

// reduce32 maps the low 32 bits of x to [0, n) by multiply-shift, n <
// 2^31: exact for powers of two, else biased by less than n/2^32.
func reduce32(x uint64, n int) int {
	return int(uint64(uint32(x)) * uint64(n) >> 32)
}
