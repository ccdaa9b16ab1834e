package conformance

import (
	"strings"
	"testing"
)

func TestLoadersReadTheRepositoryVectors(t *testing.T) {
	verdicts, err := LoadIngestVerdicts()
	if err != nil {
		t.Fatal(err)
	}
	if verdicts.MaxEventBytes <= 0 || len(verdicts.Roster) == 0 {
		t.Errorf("ingest verdicts lack their state: max %d, roster %v", verdicts.MaxEventBytes, verdicts.Roster)
	}
	signatures, err := LoadSignatures()
	if err != nil {
		t.Fatal(err)
	}
	if signatures.Sign[0].ExpectedSignature == "" || signatures.Verify[0].Expect == "" {
		t.Errorf("signature cases decoded without their expectations: %+v %+v", signatures.Sign[0], signatures.Verify[0])
	}
}

func TestDecodeStrict(t *testing.T) {
	cases := []struct {
		name, in string
		wantErr  string
	}{
		{"known fields", `{"about":"x","sign":[{"name":"n"}]}`, ""},
		{"trailing space", "{\"about\":\"x\"}\n", ""},
		{"unknown section", `{"about":"x","replay":[]}`, `unknown field "replay"`},
		{"unknown case field", `{"sign":[{"name":"n","nonce":"1"}]}`, `unknown field "nonce"`},
		{"wrong type", `{"sign":{}}`, "cannot unmarshal"},
		{"second document", `{"about":"x"} {"about":"y"}`, "data after the top-level object"},
		{"stray brace", `{"about":"x"}}`, "data after the top-level object"},
		{"empty", ``, "EOF"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var v Signatures
			err := decodeStrict(strings.NewReader(c.in), &v)
			if c.wantErr == "" {
				if err != nil {
					t.Errorf("err = %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), c.wantErr) {
				t.Errorf("err = %v, want one mentioning %q", err, c.wantErr)
			}
		})
	}
}

func TestIngestCaseValue(t *testing.T) {
	literal, empty := `{"a":1}`, ""
	cases := []struct {
		name string
		c    IngestCase
		want []byte
	}{
		{"none", IngestCase{}, nil},
		{"literal", IngestCase{Literal: &literal}, []byte(literal)},
		{"empty literal", IngestCase{Literal: &empty}, []byte{}},
		{"repeat", IngestCase{Repeat: &ValueRepeat{Char: "x", Count: 3}}, []byte("xxx")},
	}
	for _, c := range cases {
		got := c.c.Value()
		if string(got) != string(c.want) || (got == nil) != (c.want == nil) {
			t.Errorf("%s: Value() = %q (nil %t), want %q (nil %t)", c.name, got, got == nil, c.want, c.want == nil)
		}
	}
}
