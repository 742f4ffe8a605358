package operators_test

import (
	"fmt"
	"time"

	"github.com/skewerhq/skewer/operators"
)

type impression struct {
	User int
	Ad   string
}

type click struct {
	User int
	Ad   string
}

// A tumbling window join of ad impressions and clicks by user: each
// window's pairs come when the watermark reaches its end, and a click
// within the allowed lateness joins at once, with its new pairs only.
func ExampleWindowJoin() {
	win, err := operators.Tumbling(10 * time.Second)
	if err != nil {
		panic(err)
	}
	j, err := operators.NewWindowJoin(operators.Joiner[impression, click, string]{
		Pair: func(i impression, c click) string {
			return fmt.Sprintf("user %d saw %s, clicked %s", i.User, i.Ad, c.Ad)
		},
		// SameKey guards against key hashes that collide.
		SameKey: func(i impression, c click) bool { return i.User == c.User },
	}, win, 5*time.Second)
	if err != nil {
		panic(err)
	}
	sec := int64(time.Second)
	var out []operators.Joined[string]
	out, _ = j.AddLeft(7, 1*sec, impression{7, "shoes"}, out)
	out, _ = j.AddLeft(8, 2*sec, impression{8, "hats"}, out)
	out, _ = j.AddRight(7, 4*sec, click{7, "shoes"}, out)
	out = j.Advance(10*sec-1, out)                       // the window [0s, 10s) fires
	out, _ = j.AddRight(8, 9*sec, click{8, "hats"}, out) // after the firing, within the allowed lateness
	out = j.Advance(20*sec, out)                         // past the allowed lateness: [0s, 10s) is dropped
	out, ok := j.AddRight(8, 3*sec, click{8, "scarves"}, out)
	for _, p := range out {
		fmt.Printf("[%v, %v) %s\n", time.Duration(p.Start), time.Duration(p.End), p.Value)
	}
	fmt.Println("late:", !ok)
	fmt.Printf("%+v\n", j.Stats())
	// Output:
	// [0s, 10s) user 7 saw shoes, clicked shoes
	// [0s, 10s) user 8 saw hats, clicked hats
	// late: true
	// {Left:2 Right:2 LateLeft:0 LateRight:1 Pairs:2 Expired:4}
}

type order struct {
	ID   int
	Item string
}

type shipment struct {
	Order int
	By    string
}

// An interval join of orders and their shipments within an hour after the
// order: a pair comes as soon as both records are present.
func ExampleIntervalJoin() {
	j, err := operators.NewIntervalJoin(operators.Joiner[order, shipment, string]{
		Pair: func(o order, s shipment) string {
			return fmt.Sprintf("order %d (%s) shipped by %s", o.ID, o.Item, s.By)
		},
	}, 0, time.Hour, 0)
	if err != nil {
		panic(err)
	}
	min := int64(time.Minute)
	var out []operators.Joined[string]
	out, _ = j.AddLeft(1, 0, order{1, "book"}, out)
	out, _ = j.AddRight(1, 30*min, shipment{1, "post"}, out)
	out, _ = j.AddRight(2, 40*min, shipment{2, "courier"}, out) // before its order
	out, _ = j.AddLeft(2, 20*min, order{2, "lamp"}, out)
	out, _ = j.AddRight(1, 90*min, shipment{1, "courier"}, out) // too late after its order
	j.Advance(85*min, nil)                                      // no shipment still to come can match the orders before 25m
	for _, p := range out {
		fmt.Println(time.Duration(p.Time), p.Value)
	}
	fmt.Println("records held:", j.Pending())
	// Output:
	// 30m0s order 1 (book) shipped by post
	// 40m0s order 2 (lamp) shipped by courier
	// records held: 1
}

type person struct {
	ID   int
	Name string
}

type auction struct {
	Seller int
	Item   string
}

// A regular join of persons and the auctions they sell (Nexmark q3):
// persons are retained for a day and auctions for an hour, in event time.
func ExampleRegularJoin() {
	j, err := operators.NewRegularJoin(operators.Joiner[person, auction, string]{
		Pair: func(p person, a auction) string { return p.Name + " sells " + a.Item },
	}, 24*time.Hour, time.Hour, 0)
	if err != nil {
		panic(err)
	}
	hour := int64(time.Hour)
	var out []operators.Joined[string]
	out, _ = j.AddRight(1, 0, auction{1, "a clock"}, out)
	out, _ = j.AddLeft(1, hour/2, person{1, "Ada"}, out)
	out, _ = j.AddRight(1, 5*hour, auction{1, "a chair"}, out)
	out, _ = j.AddRight(1, 30*hour, auction{1, "a desk"}, out) // past Ada's retention
	for _, p := range out {
		fmt.Println(p.Value)
	}
	// Output:
	// Ada sells a clock
	// Ada sells a chair
}
