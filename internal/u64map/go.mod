// u64map is a module of its own, needing only hashx (and testify for its
// tests), so that the sketch module shares it with the root module without
// that graph.
module github.com/skewerhq/skewer/internal/u64map

go 1.23.0

replace github.com/skewerhq/skewer/internal/hashx => ../hashx

require (
	github.com/skewerhq/skewer/internal/hashx v0.0.0
	github.com/stretchr/testify v1.12.1
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect
