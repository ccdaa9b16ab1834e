package output

import "time"

// OptionalTime shows "-" for a time that has not happened.
func OptionalTime(at *time.Time) string {
	if at == nil {
		return "-"
	}
	return at.Format(time.RFC3339)
}
