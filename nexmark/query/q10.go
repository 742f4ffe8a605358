package query

import (
	"strconv"
	"time"

	"github.com/skewerhq/skewer/nexmark"
	"github.com/skewerhq/skewer/runtime"
)

// Q10Row is a bid with the day and minute it was made (q10), as the
// reference writes it to files partitioned by both.
type Q10Row struct {
	Auction  int64  `json:"auction"`
	Bidder   int64  `json:"bidder"`
	Price    int64  `json:"price"`
	DateTime int64  `json:"date_time"`
	Extra    string `json:"extra"`
	Dt       string `json:"dt"` // yyyy-MM-dd, UTC
	Hm       string `json:"hm"` // HH:mm, UTC
}

// Q10 turns every bid into a Q10Row; Q10Sink writes them to files.
func Q10(src *runtime.Stream[nexmark.Event], opts Options) (*runtime.Stream[Q10Row], error) {
	return stateless(src, "q10", opts, func(b nexmark.Bid) (Q10Row, bool) {
		t := time.Unix(0, b.DateTime).UTC()
		return Q10Row{Auction: b.Auction, Bidder: b.Bidder, Price: b.Price, DateTime: b.DateTime, Extra: b.Extra,
			Dt: t.Format(time.DateOnly), Hm: t.Format("15:04")}, true
	})
}

// AppendQ10CSV appends r as a CSV line: auction, bidder, price, dateTime
// (ns), extra, dt, hm. No field holds a comma, quote or newline (Extra
// is letters), so none is quoted.
func AppendQ10CSV(dst []byte, r Q10Row) ([]byte, error) {
	dst = strconv.AppendInt(dst, r.Auction, 10)
	dst = append(dst, ',')
	dst = strconv.AppendInt(dst, r.Bidder, 10)
	dst = append(dst, ',')
	dst = strconv.AppendInt(dst, r.Price, 10)
	dst = append(dst, ',')
	dst = strconv.AppendInt(dst, r.DateTime, 10)
	dst = append(dst, ',')
	dst = append(dst, r.Extra...)
	dst = append(dst, ',')
	dst = append(dst, r.Dt...)
	dst = append(dst, ',')
	dst = append(dst, r.Hm...)
	return append(dst, '\n'), nil
}

// Q10Sink writes s into dir through a runtime.FileSink of CSV lines
// (AppendQ10CSV), one file per worker and checkpoint, committed exactly
// once (runtime.TwoPhaseSink). The reference partitions its files by dt
// and hm in directories; skewer writes them as the last two columns, and
// the committed files are FileSink.Files.
func Q10Sink(s *runtime.Stream[Q10Row], dir string, workers int) (*runtime.FileSink[Q10Row], error) {
	fs, err := runtime.NewFileSink(dir, workers, AppendQ10CSV)
	if err != nil {
		return nil, err
	}
	runtime.TwoPhaseSink(s, "q10/files", fs)
	return fs, nil
}
