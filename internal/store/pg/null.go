package pg

// NullIfZero stores the zero value (a zero time included, whatever its
// location) as NULL, the schema's "not set".
func NullIfZero[T comparable](v T) *T {
	var zero T
	if z, ok := any(v).(interface{ IsZero() bool }); (ok && z.IsZero()) || v == zero {
		return nil
	}
	return &v
}

// ValueOrZero reads NULL as the zero value.
func ValueOrZero[T any](p *T) T {
	if p == nil {
		var zero T
		return zero
	}
	return *p
}
