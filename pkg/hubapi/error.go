package hubapi

// Error is the body of every error answer (docs/api.md): a snake_case code
// for programs, a message for people, and details such as the offending
// field of an invalid_request.
type Error struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
}

// Error lets a client return the answer as it is, so callers can match on
// Code with errors.As instead of parsing text.
func (e *Error) Error() string {
	switch {
	case e.Code == "":
		return e.Message
	case e.Message == "":
		return e.Code
	}
	return e.Code + ": " + e.Message
}
