package crypto_test

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/crypto"
)

func TestParseKeyringAccepts(t *testing.T) {
	single := testKey("single-key")
	// The id every encoding of `single` must get, computed independently with
	// sha256sum and pinned so that a change to the derivation, which would
	// orphan stored envelopes, cannot go unnoticed.
	const singleID = "k43f8d03e"
	newKey, oldKey := testKey("new"), testKey("old")

	tests := []struct {
		name       string
		value      string
		wantActive string
		wantIDs    []string
	}{
		{"base64 std padded", base64.StdEncoding.EncodeToString(single), singleID, []string{singleID}},
		{"base64 std unpadded", base64.RawStdEncoding.EncodeToString(single), singleID, []string{singleID}},
		{"base64 url padded", base64.URLEncoding.EncodeToString(single), singleID, []string{singleID}},
		{"base64 url unpadded", base64.RawURLEncoding.EncodeToString(single), singleID, []string{singleID}},
		{"hex lower", hex.EncodeToString(single), singleID, []string{singleID}},
		{"hex upper", strings.ToUpper(hex.EncodeToString(single)), singleID, []string{singleID}},
		{"surrounding whitespace", "  " + b64(single) + "\n", singleID, []string{singleID}},
		{"one named key", "only:" + b64(single), "only", []string{"only"}},
		{"rotation list", "new:" + b64(newKey) + ",old:" + b64(oldKey), "new", []string{"new", "old"}},
		{"spaces around entries", " new : " + b64(newKey) + " , old:" + hex.EncodeToString(oldKey) + " ", "new", []string{"new", "old"}},
		{"longest id, every character class", "Az09_-" + strings.Repeat("x", 26) + ":" + b64(single), "Az09_-" + strings.Repeat("x", 26), []string{"Az09_-" + strings.Repeat("x", 26)}},
		{"rotating from an unnamed key", "new:" + b64(newKey) + "," + singleID + ":" + b64(single), "new", []string{"new", singleID}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kr, err := crypto.ParseKeyring(tt.value)
			if err != nil {
				t.Fatalf("ParseKeyring: %v", err)
			}
			if got := kr.ActiveKeyID(); got != tt.wantActive {
				t.Errorf("ActiveKeyID = %q, want %q", got, tt.wantActive)
			}
			if got := kr.KeyIDs(); !slices.Equal(got, tt.wantIDs) {
				t.Errorf("KeyIDs = %q, want %q", got, tt.wantIDs)
			}
		})
	}
}

func TestParseKeyringBase64URLAlphabetIsExercised(t *testing.T) {
	// The url-alphabet cases above prove something only if the key's
	// standard encoding contains characters the url alphabet replaces.
	std := base64.StdEncoding.EncodeToString(testKey("single-key"))
	if !strings.ContainsAny(std, "+/") {
		t.Fatalf("test key %q encodes without + or /; pick another label", std)
	}
}

func TestParseKeyringEveryEncodingDecryptsTheSameEnvelopes(t *testing.T) {
	material := testKey("single-key")
	envelope := mustEncrypt(t, mustParseKeyring(t, b64(material)), []byte("secret"), "row", "field")
	for _, value := range []string{
		base64.RawURLEncoding.EncodeToString(material),
		hex.EncodeToString(material),
	} {
		if _, err := mustParseKeyring(t, value).Decrypt(envelope, "row", "field"); err != nil {
			t.Errorf("Decrypt under another encoding of the same key: %v", err)
		}
	}
}

func TestParseKeyringRejects(t *testing.T) {
	good := b64(testKey("good"))
	other := b64(testKey("other"))
	short := b64(testKey("short")[:16])
	long := b64(append(testKey("long"), 0x01))
	hexShort := hex.EncodeToString(testKey("hexshort")[:31])
	notKey := "zq$%not&a&key%material$"

	tests := []struct {
		name     string
		value    string
		wantHint bool     // the message says how to generate a key
		wantText string   // a fragment the message must contain
		secrets  []string // text that must not appear in the message
	}{
		{"empty", "", true, "empty", nil},
		{"blank", " \t\n", true, "empty", nil},
		{"16-byte key", short, true, "decodes to 16 bytes, need 32", []string{short}},
		{"33-byte key", long, true, "decodes to 33 bytes, need 32", []string{long}},
		{"31-byte hex key", hexShort, true, "need 32", []string{hexShort}},
		{"not an encoding", notKey, true, "neither base64 nor 64 hex", []string{notKey}},
		{"named key too short", "a:" + short, true, `entry 1 (id "a")`, []string{short}},
		{"second key bad", "a:" + good + ",b:" + short, true, `entry 2 (id "b")`, []string{good, short}},
		{"named key empty", "a:", true, "is empty", nil},
		{"duplicate ids", "a:" + good + ",a:" + other, false, `duplicate key id "a"`, []string{good, other}},
		{"empty id", ":" + good, false, "key id must be", []string{good}},
		{"id with space", "bad id:" + good, false, "key id must be", []string{good, "bad id"}},
		{"id with dot", "a.b:" + good, false, "key id must be", []string{good}},
		{"id too long", strings.Repeat("x", 33) + ":" + good, false, "key id must be", []string{good}},
		{"id not ascii", "clé:" + good, false, "key id must be", []string{good}},
		{"key pasted as id", good + ":" + other, false, "entry 1: key id must be", []string{good, other}},
		{"trailing comma", "a:" + good + ",", false, "entry 2 is empty", []string{good}},
		{"leading comma", ",a:" + good, false, "entry 1 is empty", []string{good}},
		{"double comma", "a:" + good + ",,b:" + other, false, "entry 2 is empty", []string{good, other}},
		{"list entry without id", "a:" + good + "," + other, false, "entry 2 is not id:key", []string{good, other}},
		{"unnamed keys listed", good + "," + other, false, "entry 1 is not id:key", []string{good, other}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			kr, err := crypto.ParseKeyring(tt.value)
			if err == nil {
				t.Fatalf("ParseKeyring accepted %q: %v", tt.value, kr)
			}
			if !errors.Is(err, crypto.ErrInvalidKeyring) {
				t.Errorf("error %v does not match ErrInvalidKeyring", err)
			}
			msg := err.Error()
			if strings.ContainsAny(msg, "\r\n") {
				t.Errorf("error is not one line: %q", msg)
			}
			if !strings.Contains(msg, tt.wantText) {
				t.Errorf("error %q does not contain %q", msg, tt.wantText)
			}
			if got := strings.Contains(msg, "openssl rand -base64 32"); got != tt.wantHint {
				t.Errorf("error %q: contains generation hint = %v, want %v", msg, got, tt.wantHint)
			}
			for _, secret := range tt.secrets {
				assertNoSecret(t, msg, secret)
			}
		})
	}
}

func TestKeyringPrintsNoKeyMaterial(t *testing.T) {
	newKey, oldKey := b64(testKey("new")), b64(testKey("old"))
	kr := mustParseKeyring(t, "new:"+newKey+",old:"+oldKey)
	for _, verb := range []string{"%v", "%+v", "%s", "%#v"} {
		out := fmt.Sprintf(verb, kr)
		assertNoSecret(t, out, newKey)
		assertNoSecret(t, out, oldKey)
	}
	if got, want := kr.String(), "Keyring(active=new, keys=new,old)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

func TestKeyIDsReturnsACopy(t *testing.T) {
	kr := mustParseKeyring(t, "a:"+b64(testKey("a"))+",b:"+b64(testKey("b")))
	ids := kr.KeyIDs()
	ids[0] = "mutated"
	if got := kr.KeyIDs(); got[0] != "a" {
		t.Errorf("KeyIDs after mutating a returned slice = %q", got)
	}
}
