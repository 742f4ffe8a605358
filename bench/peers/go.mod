module github.com/skewerhq/skewer/bench/peers

go 1.26.0

require (
	github.com/DataDog/sketches-go v1.4.8
	github.com/axiomhq/hyperloglog v0.3.0
	github.com/influxdata/tdigest v0.0.1
	github.com/kamstrup/intmap v0.5.2
	github.com/skewerhq/skewer v0.0.0
	github.com/skewerhq/skewer/internal/u64map v0.0.0
	github.com/skewerhq/skewer/sketch v0.0.0
	github.com/tylertreat/BoomFilters v0.0.0-20251001182300-5b3723cc64ae
)

require (
	github.com/RoaringBitmap/roaring/v2 v2.30.0 // indirect
	github.com/bits-and-blooms/bitset v1.24.4 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/d4l3k/messagediff v1.2.1 // indirect
	github.com/dgryski/go-metro v0.0.0-20250106013310-edb8663e5e33 // indirect
	github.com/mschoch/smat v0.2.0 // indirect
	github.com/skewerhq/skewer/internal/hashx v0.0.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

replace github.com/skewerhq/skewer => ../..

replace github.com/skewerhq/skewer/sketch => ../../sketch

replace github.com/skewerhq/skewer/internal/hashx => ../../internal/hashx

replace github.com/skewerhq/skewer/internal/u64map => ../../internal/u64map
