package operators

import (
	"encoding/json"
	"fmt"
)

// JSONCodec encodes a T as JSON with encoding/json: a struct's exported
// fields by their json tags, as any JSON library writes and reads them
// (the value format of most Kafka topics other services write). Decode
// fills a new T from one JSON value (fields the struct lacks are ignored,
// as services add fields) and fails with an error wrapping ErrCorrupt on
// anything that is not one JSON value of T's shape. Append returns
// json.Marshal's error for a value it refuses (a channel, a NaN). Both
// allocate, as encoding/json does.
type JSONCodec[T any] struct{}

// Append implements Codec.
func (JSONCodec[T]) Append(dst []byte, v T) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return dst, fmt.Errorf("%w: json: %w", ErrInvalidParameter, err)
	}
	return append(dst, b...), nil
}

// Decode implements Codec.
func (JSONCodec[T]) Decode(src []byte) (T, error) {
	var v T
	if err := json.Unmarshal(src, &v); err != nil {
		var zero T
		return zero, fmt.Errorf("%w: json: %w", ErrCorrupt, err)
	}
	return v, nil
}
