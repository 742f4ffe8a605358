// Package peers compares skewer's sketches with other Go libraries, in
// benchmarks only. It is a separate module (bench/peers/go.mod) so that the
// competitors never enter skewer's own go.mod; run it from this folder with
//
//	go test -run '^$' -bench . -benchmem
//
// Every comparison runs both libraries in one `go test` run, at equal memory,
// on the same keys, and reports domain figures (RMSE, bytes) with
// b.ReportMetric. The figures we quote are in docs/sketches/peers.md.
package peers
