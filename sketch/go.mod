// sketch is a module of its own so that a program importing only the sketches
// gets xxhash and skewer's two dependency-free helper modules, and the lowest Go
// version the sketches need, instead of the root module's graph.
module github.com/skewerhq/skewer/sketch

go 1.24.0

require (
	github.com/cespare/xxhash/v2 v2.3.0
	github.com/skewerhq/skewer/internal/hashx v0.0.0
	github.com/skewerhq/skewer/internal/u64map v0.0.0
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect

replace github.com/skewerhq/skewer/internal/hashx => ../internal/hashx

replace github.com/skewerhq/skewer/internal/u64map => ../internal/u64map
