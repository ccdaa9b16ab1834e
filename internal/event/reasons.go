package event

// QuarantineReasons lists every reason a record can be quarantined for,
// in rule order: what a quarantine search may filter on.
func QuarantineReasons() []Reason {
	reasons := []Reason{ReasonDuplicateAttribute}
	for a := range attrCount {
		if r := missingReasons[a]; r != "" {
			reasons = append(reasons, r)
		}
		if r := invalidReasons[a]; r != "" {
			reasons = append(reasons, r)
		}
	}
	return append(reasons, ReasonPayloadTooLarge)
}
