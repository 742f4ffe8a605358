// hashx is a module of its own, needing nothing but testify for its tests, so
// that the sketch module shares it with the root module without that graph.
module github.com/skewerhq/skewer/internal/hashx

go 1.22.0

require github.com/stretchr/testify v1.12.1

require go.yaml.in/yaml/v3 v3.0.5 // indirect
