module github.com/skewerhq/skewer/bench/peers

go 1.26.0

require (
	github.com/axiomhq/hyperloglog v0.3.0
	github.com/skewerhq/skewer v0.0.0
)

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dgryski/go-metro v0.0.0-20250106013310-edb8663e5e33 // indirect
	github.com/kamstrup/intmap v0.5.2 // indirect
)

replace github.com/skewerhq/skewer => ../..
