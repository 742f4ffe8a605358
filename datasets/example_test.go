package datasets_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/skewerhq/skewer/datasets"
	"github.com/skewerhq/skewer/stream"
)

// A Zipf stream of 100,000 keys over 1,000 keys with s = 1.2: the hottest
// key's share is close to its probability 1/H(1000, 1.2).
func ExampleNewZipf() {
	z, err := datasets.NewZipf(1000, 1.2, 100_000, 42)
	if err != nil {
		panic(err)
	}
	truth := datasets.Count(z)
	top := truth.Top(1)[0]
	rank, _ := z.Rank(top.Key)
	fmt.Printf("rank %d, share %.3f, p1 %.3f\n", rank, truth.P1(), z.Prob(1))
	// Output:
	// rank 1, share 0.230, p1 0.231
}

// Exact frequencies: rank r appears round(m * p_r) times, in shuffled order.
func ExampleNewExactZipf() {
	g, err := datasets.NewExactZipf(100, 1, 10_000, 7)
	if err != nil {
		panic(err)
	}
	truth := datasets.Count(g)
	fmt.Println(g.Len(), truth.Count(g.Key(1)), g.Count(1), truth.Count(g.Key(100)))
	// Output:
	// 9999 1928 1928 19
}

// The hot key moves every Period records: with Shift 1 the second hottest
// key of epoch 0 is the hottest of epoch 1.
func ExampleNewDrift() {
	d, err := datasets.NewDrift(datasets.DriftConfig{K: 1000, S: 1.5, N: 20_000, Period: 10_000, Shift: 1, Seed: 3})
	if err != nil {
		panic(err)
	}
	buf := make([]stream.Record, 10_000)
	for e := range int64(2) {
		d.Fill(buf)
		top := datasets.Count(stream.FromRecords(buf)).Top(1)[0].Key
		r0, _ := d.RankAt(top, 0)
		fmt.Printf("epoch %d: hottest key had rank %d in epoch 0\n", e, r0)
	}
	// Output:
	// epoch 0: hottest key had rank 1 in epoch 0
	// epoch 1: hottest key had rank 2 in epoch 0
}

// Event times at 1,000 records per second, up to 5 ms out of order, 10% of
// records late by up to 1 ms more; a Disorder finds the late ones again.
func ExampleNewEventTime() {
	keys, _ := datasets.NewUniform(10, 10_000, 1)
	e, err := datasets.NewEventTime(keys, datasets.EventTimeConfig{
		Rate: 1000, MaxDelay: 5e6, LateFraction: 0.1, MaxLateness: 1e6, Seed: 1,
	})
	if err != nil {
		panic(err)
	}
	buf := make([]stream.Record, 10_000)
	e.Fill(buf)
	dis := datasets.NewDisorder(0, 5e6)
	late := 0
	for _, r := range buf {
		if _, isLate := dis.Observe(r.Time); isLate {
			late++
		}
	}
	fmt.Println(late, e.Late())
	// Output:
	// 981 981
}

func ExampleNewUniform() {
	u, _ := datasets.NewUniform(4, 10_000, 5)
	t := datasets.Count(u)
	fmt.Println(t.Distinct(), t.N())
	// Output:
	// 4 10000
}

func ExampleNewConstant() {
	c, _ := datasets.NewConstant(99, 1000)
	fmt.Println(datasets.Count(c).P1())
	// Output:
	// 1
}

// Words from a user's text file; KeyName recovers each word from its hash.
func ExampleLoadWords() {
	dir, _ := os.MkdirTemp("", "words")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "text.txt")
	_ = os.WriteFile(path, []byte("The cat and the dog, and THE bird."), 0o644)
	c, err := datasets.LoadWords(path)
	if err != nil {
		panic(err)
	}
	t := datasets.Count(c.Stream())
	for _, kc := range t.Top(2) {
		w, _ := c.KeyName(kc.Key)
		fmt.Println(w, kc.Count)
	}
	fmt.Println(c.Len(), c.Distinct())
	// Output:
	// the 3
	// and 2
	// 8 5
}

// Item ids, one basket per line.
func ExampleLoadItems() {
	dir, _ := os.MkdirTemp("", "items")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "baskets.dat")
	_ = os.WriteFile(path, []byte("1 2 3\n2 3\n3\n"), 0o644)
	c, err := datasets.LoadItems(path)
	if err != nil {
		panic(err)
	}
	t := datasets.Count(c.Stream())
	name, _ := c.KeyName(t.Top(1)[0].Key)
	fmt.Println(c.Len(), c.Distinct(), name)
	// Output:
	// 6 3 3
}

// A frequency table sampled into a stream of any length (alias method).
func ExampleLoadFreqTable() {
	dir, _ := os.MkdirTemp("", "table")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "counts.tsv")
	_ = os.WriteFile(path, []byte("the\t60\nof\t30\nand\t10\n"), 0o644)
	ft, err := datasets.LoadFreqTable(path)
	if err != nil {
		panic(err)
	}
	s, _ := ft.Sample(100_000, 1)
	t := datasets.Count(s)
	for _, kc := range t.Top(3) {
		w, _ := s.KeyName(kc.Key)
		fmt.Printf("%s %.2f\n", w, float64(kc.Count)/float64(t.N()))
	}
	// Output:
	// the 0.60
	// of 0.30
	// and 0.10
}

// A file read lazily: Fill reads only as far as the records asked for, and
// Err says whether the stream ended early on a bad file.
func ExampleOpenWords() {
	dir, _ := os.MkdirTemp("", "stream")
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "text.txt")
	_ = os.WriteFile(path, []byte("one two three four five\x00 six"), 0o644)
	s, err := datasets.OpenWords(path)
	if err != nil {
		panic(err)
	}
	defer s.Close()
	buf := make([]stream.Record, 3)
	n := s.Fill(buf) // reads "one two three", not the NUL byte after "five"
	first, _ := s.KeyName(buf[0].Key)
	fmt.Println(n, first, s.Err())
	for s.Fill(buf) > 0 {
	}
	fmt.Println(errors.Is(s.Err(), datasets.ErrFormat))
	// Output:
	// 3 one <nil>
	// true
}

// Seeds drive sampling only: two sources seeded differently draw different
// streams over the same keys, so they share their hot key.
func ExampleNewZipf_seeds() {
	a, _ := datasets.NewZipf(1e6, 1.2, 100_000, 1)
	b, _ := datasets.NewZipf(1e6, 1.2, 100_000, 2)
	hotA := datasets.Count(a).Top(1)[0].Key
	hotB := datasets.Count(b).Top(1)[0].Key
	fmt.Println(a.Key(1) == b.Key(1), hotA == hotB)
	// Output:
	// true true
}
