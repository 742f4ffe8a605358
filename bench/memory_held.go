package bench

import "reflect"

// heldBytes is the memory a value holds: the value itself (what a pointer
// points to, for a pointer) and, once each, everything its pointers,
// slices, interfaces and maps reach. A slice
// counts its whole backing array (capacity × element size) from where it
// starts; a map counts its entries (keys and values), not its buckets. It
// reads unexported fields through reflection and changes nothing. The
// sketches the harness measures hold no maps (their uint64 indexes are
// open-addressing tables), so for them the figure is exact, up to the
// allocator's rounding of each block to its size class.
func heldBytes(v any) uint64 {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() {
		return 0
	}
	seen := map[uintptr]bool{}
	if rv.Kind() == reflect.Pointer {
		return reached(rv, seen)
	}
	return uint64(rv.Type().Size()) + reached(rv, seen)
}

// reached is the memory reachable from v that v does not hold inline.
func reached(v reflect.Value, seen map[uintptr]bool) uint64 {
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() || seen[v.Pointer()] {
			return 0
		}
		seen[v.Pointer()] = true
		e := v.Elem()
		return uint64(e.Type().Size()) + reached(e, seen)
	case reflect.Slice:
		if v.IsNil() || v.Cap() == 0 || seen[v.Pointer()] {
			return 0
		}
		seen[v.Pointer()] = true
		n := uint64(v.Cap()) * uint64(v.Type().Elem().Size())
		if holdsRefs(v.Type().Elem()) {
			all := v.Slice(0, v.Cap())
			for i := range all.Len() {
				n += reached(all.Index(i), seen)
			}
		}
		return n
	case reflect.Array:
		var n uint64
		if holdsRefs(v.Type().Elem()) {
			for i := range v.Len() {
				n += reached(v.Index(i), seen)
			}
		}
		return n
	case reflect.Struct:
		var n uint64
		for i := range v.NumField() {
			n += reached(v.Field(i), seen)
		}
		return n
	case reflect.Interface:
		if v.IsNil() {
			return 0
		}
		e := v.Elem()
		if e.Kind() == reflect.Pointer {
			return reached(e, seen)
		}
		return uint64(e.Type().Size()) + reached(e, seen)
	case reflect.Map:
		if v.IsNil() || seen[v.Pointer()] {
			return 0
		}
		seen[v.Pointer()] = true
		t := v.Type()
		n := uint64(v.Len()) * uint64(t.Key().Size()+t.Elem().Size())
		for it := v.MapRange(); it.Next(); {
			n += reached(it.Key(), seen) + reached(it.Value(), seen)
		}
		return n
	case reflect.String:
		return uint64(v.Len())
	}
	return 0
}

// holdsRefs tells whether values of t can reach memory beyond themselves.
func holdsRefs(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Interface, reflect.Map, reflect.String:
		return true
	case reflect.Array:
		return holdsRefs(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if holdsRefs(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}
