package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/skewerhq/skewer/bench"
	"github.com/skewerhq/skewer/kafka/kafkabench"
)

// The golden files pin what users and scripts rely on: each subcommand's
// -h text and the JSON schema of its rows. A change to either is a change
// of the command line's contract: rerun with -update, review the diff, and
// update docs/streambench.md with it. Golden files are never edited by hand
// to make a test pass.
var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
		require.NoError(t, os.WriteFile(path, []byte(got), 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "missing golden file: run go test ./cmd/streambench -run Golden -update")
	require.Equal(t, string(want), got, "%s differs: rerun with -update if the change is meant", path)
}

func TestGoldenHelp(t *testing.T) {
	code, out, errs := cli(t, "-h")
	require.Equal(t, exitOK, code)
	require.Empty(t, out)
	golden(t, "help/streambench.golden", errs)
	for _, sub := range names() {
		t.Run(sub, func(t *testing.T) {
			code, out, errs := cli(t, sub, "-h")
			require.Equal(t, exitOK, code)
			require.Empty(t, out, "-h goes to stderr")
			golden(t, "help/"+sub+".golden", errs)
		})
	}
}

// rowTypes are the types each subcommand's JSON rows encode.
var rowTypes = map[string]reflect.Type{
	"run":        reflect.TypeFor[bench.RunRow](),
	"partition":  reflect.TypeFor[bench.PartitionRow](),
	"sketch":     reflect.TypeFor[bench.SketchRow](),
	"kafka":      reflect.TypeFor[kafkabench.Row](),
	"detector":   reflect.TypeFor[bench.DetectorRow](),
	"forgetting": reflect.TypeFor[bench.ForgettingRow](),
	"scale":      reflect.TypeFor[bench.ScaleResult](),
	"nexmark":    reflect.TypeFor[bench.NexmarkRow](),
}

func TestGoldenSchema(t *testing.T) {
	for _, sub := range names() {
		t.Run(sub, func(t *testing.T) {
			typ, ok := rowTypes[sub]
			require.True(t, ok, "every subcommand's row type is pinned")
			var b strings.Builder
			schema(&b, "", typ)
			golden(t, "schema/"+sub+".golden", b.String())
		})
	}
}

// schema writes one line per JSON field of t: its path, its JSON type, and
// "optional" for a field that may be absent.
func schema(b *strings.Builder, prefix string, t reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			schema(b, prefix, f.Type)
			continue
		}
		tag := f.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
			name = f.Name
		}
		ft := f.Type
		opt := ""
		if strings.Contains(opts, "omitempty") {
			opt = " optional"
		}
		if ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		path := prefix + name
		fmt.Fprintf(b, "%s %s%s\n", path, jsonType(ft), opt)
		switch {
		case ft.Kind() == reflect.Struct:
			schema(b, path+".", ft)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			schema(b, path+"[].", ft.Elem())
		}
	}
}

func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Struct:
		return "object"
	case reflect.Slice, reflect.Array:
		return "[" + jsonType(t.Elem()) + "]"
	}
	return t.Kind().String()
}

func TestSchemaNames(t *testing.T) {
	// Every JSON field is snake_case, and every CSV column of a row is a
	// snake_case name too.
	for sub, typ := range rowTypes {
		var b strings.Builder
		schema(&b, "", typ)
		for _, line := range strings.Split(strings.TrimSpace(b.String()), "\n") {
			path, _, _ := strings.Cut(line, " ")
			for _, part := range strings.FieldsFunc(path, func(r rune) bool { return r == '.' || r == '[' || r == ']' }) {
				require.Regexp(t, `^[a-z][a-z0-9_]*$`, part, "%s: %s", sub, line)
			}
		}
	}
}
