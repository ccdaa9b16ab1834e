package output

import "strconv"

// Count is n followed by the noun, in the plural unless n is one:
// "1 attempt", "0 attempts", "5 attempts".
func Count(n int, singular, plural string) string {
	if n == 1 {
		return "1 " + singular
	}
	return strconv.Itoa(n) + " " + plural
}
