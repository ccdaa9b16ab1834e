package event

import (
	"slices"
	"testing"
)

func TestQuarantineReasons(t *testing.T) {
	got := QuarantineReasons()
	for _, want := range []Reason{ReasonDuplicateAttribute, ReasonMissingID, ReasonInvalidID, ReasonInvalidTraceState, ReasonPayloadTooLarge} {
		if !slices.Contains(got, want) {
			t.Errorf("QuarantineReasons lacks %s", want)
		}
	}
	for _, discard := range []Reason{ReasonSystemEvent, ReasonUnknownTenant, ReasonInactiveTenant, ReasonDuplicate} {
		if slices.Contains(got, discard) {
			t.Errorf("QuarantineReasons holds the discard reason %s", discard)
		}
	}
	if len(slices.Compact(slices.Clone(got))) != len(got) {
		t.Errorf("a reason is listed twice: %v", got)
	}
}
