package quarantine_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/hubctl/hubctl/internal/cli/clitest"
	"github.com/hubctl/hubctl/internal/cli/cmdutil"
	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

type header struct{ key, value []byte }

// insert stores a poison record as ingest would.
func insert(t *testing.T, dsn, reason string, offset int64, key []byte, headers []header, value []byte, at time.Time) {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	keys, values := [][]byte{}, [][]byte{}
	for _, h := range headers {
		keys, values = append(keys, h.key), append(values, h.value)
	}
	_, err = conn.Exec(context.Background(), `
		INSERT INTO quarantine (reason, detail, topic, kafka_partition, kafka_offset,
		                        record_key, header_keys, header_values, value, received_at, value_size, value_sha256)
		VALUES ($1, 'the detail', 'lerian.streaming.midaz_transaction.posted', 1, $2, $3, $4, $5, $6::bytea, $7,
		        octet_length($6::bytea), sha256($6::bytea))`,
		reason, offset, key, keys, values, value, at)
	if err != nil {
		t.Fatal(err)
	}
}

var t0 = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func TestQuarantineListJSONIsTheSummary(t *testing.T) {
	dsn := pgtest.DSN(t)
	insert(t, dsn, "missing_id", 10, nil, nil, []byte{}, t0)
	insert(t, dsn, "invalid_tenantid", 11, []byte("acme"), []header{
		{[]byte("ce-specversion"), []byte("1.0")},
		{[]byte("ce-tenantid"), []byte{0xff, 0xfe, 0x00}},
	}, []byte(`{"a":1}`), t0.Add(time.Minute))

	r := clitest.Run(t, clitest.Database(dsn), "quarantine", "list", "-o", "json")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	var page struct {
		Items      []json.RawMessage `json:"items"`
		NextCursor *string           `json:"next_cursor"`
	}
	if err := json.Unmarshal([]byte(r.Stdout), &page); err != nil {
		t.Fatalf("%v\n%s", err, r.Stdout)
	}
	if len(page.Items) != 2 || page.NextCursor != nil {
		t.Fatalf("want 2 items and no next cursor:\n%s", r.Stdout)
	}
	want := []string{
		`{"id":2,"reason":"invalid_tenantid","detail":"the detail","topic":"lerian.streaming.midaz_transaction.posted",` +
			`"partition":1,"offset":11,"key":"acme","key_size":4,` +
			`"headers":[{"key":"ce-specversion","value":"1.0"},{"key":"ce-tenantid","value":"//4A","encoding":"base64"}],"header_count":2,` +
			`"value_prefix_base64":"eyJhIjoxfQ==","value_size":7,"value_sha256":"` + sha256Hex(`{"a":1}`) + `","value_truncated":false,` +
			`"received_at":"2025-06-01T12:01:00Z"}`,
		`{"id":1,"reason":"missing_id","detail":"the detail","topic":"lerian.streaming.midaz_transaction.posted",` +
			`"partition":1,"offset":10,"key":null,"key_size":0,"headers":[],"header_count":0,"value_prefix_base64":"",` +
			`"value_size":0,"value_sha256":"` + sha256Hex("") + `","value_truncated":false,"received_at":"2025-06-01T12:00:00Z"}`,
	}
	for i, item := range page.Items {
		if got := compact(t, item); got != want[i] {
			t.Errorf("item %d\n got  %s\n want %s", i, got, want[i])
		}
	}
}

func TestQuarantineListTable(t *testing.T) {
	dsn := pgtest.DSN(t)
	insert(t, dsn, "invalid_subject", 7, []byte{0x80}, []header{
		{[]byte("ce-subject"), []byte("\x1b[2Jgotcha\n")},
	}, []byte("x"), t0)

	r := clitest.Run(t, clitest.Database(dsn), "quarantine", "list", "-o", "table")
	if r.Code != 0 {
		t.Fatalf("exit %d: %s", r.Code, r.Stderr)
	}
	lines := strings.Split(strings.TrimRight(r.Stdout, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("want a header and one row, got:\n%s", r.Stdout)
	}
	if got := strings.Fields(lines[0]); strings.Join(got, " ") != "ID RECEIVED REASON WHERE SIZE" {
		t.Errorf("header %q", lines[0])
	}
	for _, want := range []string{"1", "2025-06-01 12:00", "invalid_subject", "lerian.streaming.midaz_transaction.posted/1/7", "1 B"} {
		if !strings.Contains(lines[1], want) {
			t.Errorf("row lacks %q: %q", want, lines[1])
		}
	}
	// The record's own text is what `quarantine get` shows, escaped.
	g := clitest.Run(t, clitest.Database(dsn), "quarantine", "get", "1", "-o", "table")
	if g.Code != 0 {
		t.Fatalf("get: exit %d: %s", g.Code, g.Stderr)
	}
	for _, want := range []string{
		"2025-06-01T12:00:00Z", "lerian.streaming.midaz_transaction.posted/1/7", "base64:gA==", `\x1b[2Jgotcha\x0a`, "the detail",
	} {
		if !strings.Contains(g.Stdout, want) {
			t.Errorf("get lacks %q:\n%s", want, g.Stdout)
		}
	}
	for _, out := range []string{r.Stdout, g.Stdout} {
		if strings.ContainsRune(out, 0x1b) {
			t.Error("an escape character from the record reached the terminal")
		}
	}
}

func TestQuarantineListFiltersAndPages(t *testing.T) {
	dsn := pgtest.DSN(t)
	for i, reason := range []string{"missing_id", "invalid_time", "missing_id", "missing_id"} {
		insert(t, dsn, reason, int64(i), nil, nil, []byte{}, t0.Add(time.Duration(i)*time.Second))
	}
	type page struct {
		Items []struct {
			Offset int64 `json:"offset"`
		} `json:"items"`
		NextCursor *string `json:"next_cursor"`
	}
	list := func(args ...string) page {
		t.Helper()
		r := clitest.Run(t, clitest.Database(dsn), append([]string{"quarantine", "list", "-o", "json"}, args...)...)
		if r.Code != 0 {
			t.Fatalf("%v: exit %d: %s", args, r.Code, r.Stderr)
		}
		var p page
		if err := json.Unmarshal([]byte(r.Stdout), &p); err != nil {
			t.Fatal(err)
		}
		return p
	}

	first := list("--reason", "missing_id", "--limit", "2")
	if len(first.Items) != 2 || first.Items[0].Offset != 3 || first.Items[1].Offset != 2 || first.NextCursor == nil {
		t.Fatalf("first page %+v", first)
	}
	second := list("--reason", "missing_id", "--limit", "2", "--cursor", *first.NextCursor)
	if len(second.Items) != 1 || second.Items[0].Offset != 0 || second.NextCursor != nil {
		t.Errorf("second page %+v", second)
	}
	if other := list("--topic", "some.other.topic"); len(other.Items) != 0 {
		t.Errorf("topic filter let through %+v", other)
	}

	r := clitest.Run(t, clitest.Database(dsn), "quarantine", "list", "-o", "table", "--reason", "missing_id", "--limit", "2")
	if want := `hubctl quarantine list --limit 2 --reason "missing_id" --cursor ` + *first.NextCursor; !strings.Contains(r.Stderr, want) {
		t.Errorf("stderr %q lacks %q", r.Stderr, want)
	}
}

func TestQuarantineListRejectsBadInput(t *testing.T) {
	dsn := pgtest.DSN(t)
	for _, c := range []struct {
		args     []string
		wantCode int
		wantErr  string
	}{
		{[]string{"--limit", "0"}, cmdutil.ExitUsage, "invalid --limit 0"},
		{[]string{"--limit", "1001"}, cmdutil.ExitUsage, "invalid --limit 1001"},
		// The hub, not the command line, judges a cursor: a rejected value
		// exits 1 in both modes.
		{[]string{"--cursor", "forged"}, cmdutil.ExitFailure, "invalid cursor"},
		// So does a reason no record can have, like dlq list --reason.
		{[]string{"--reason", "bogus"}, cmdutil.ExitFailure, `invalid reason "bogus": use one of duplicate_attribute, missing_specversion`},
		{[]string{"extra"}, cmdutil.ExitUsage, "unknown command"},
	} {
		r := clitest.Run(t, clitest.Database(dsn), append([]string{"quarantine", "list"}, c.args...)...)
		if r.Code != c.wantCode || !strings.Contains(r.Stderr, c.wantErr) || r.Stdout != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want %d mentioning %q", c.args, r.Code, r.Stdout, r.Stderr, c.wantCode, c.wantErr)
		}
	}
}

func TestQuarantineListThroughTheAPI(t *testing.T) {
	dsn := pgtest.DSN(t)
	insert(t, dsn, "missing_id", 10, []byte("k"), nil, []byte("v"), t0)
	insert(t, dsn, "invalid_id", 11, nil, nil, []byte("w"), t0.Add(time.Minute))
	remote := clitest.Remote(clitest.Serve(t, dsn), clitest.AdminToken)

	for _, args := range [][]string{
		{"-o", "json"},
		{"-o", "json", "--reason", "missing_id"},
		{"-o", "json", "--limit", "1"},
	} {
		direct := clitest.Run(t, clitest.Database(dsn), append([]string{"quarantine", "list"}, args...)...)
		api := clitest.Run(t, remote, append([]string{"quarantine", "list"}, args...)...)
		if direct.Code != 0 || api.Code != 0 || direct.Stdout != api.Stdout {
			t.Errorf("%v: direct exit %d, API exit %d; outputs differ:\n%s\n%s", args, direct.Code, api.Code, direct.Stdout, api.Stdout)
		}
	}
	if r := clitest.Run(t, remote, "quarantine", "list", "--cursor", "forged"); r.Code != cmdutil.ExitFailure {
		t.Errorf("forged cursor through the API: exit %d, want 1: %s", r.Code, r.Stderr)
	}
}

// compact strips the indentation, keeping the printed field order.
func compact(t *testing.T, raw json.RawMessage) string {
	t.Helper()
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func sha256Hex(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func TestQuarantineGet(t *testing.T) {
	dsn := pgtest.DSN(t)
	value := append([]byte("\x1b[2J"), bytes.Repeat([]byte{0x00, 0xff}, 1000)...)
	insert(t, dsn, "invalid_subject", 7, []byte("k"), []header{{[]byte("ce-subject"), []byte("a\u202eb")}}, value, t0)
	remote := clitest.Remote(clitest.Serve(t, dsn), clitest.AdminToken)

	for name, env := range map[string]map[string]string{"direct": clitest.Database(dsn), "API": remote} {
		t.Run(name, func(t *testing.T) {
			r := clitest.Run(t, env, "quarantine", "get", "1", "--raw")
			if r.Code != 0 || r.Stdout != string(value) || r.Stderr != "" {
				t.Errorf("--raw: exit %d, %d bytes out (want %d), stderr %q", r.Code, len(r.Stdout), len(value), r.Stderr)
			}
			r = clitest.Run(t, env, "quarantine", "get", "1", "-o", "json")
			var item map[string]any
			if r.Code != 0 || json.Unmarshal([]byte(r.Stdout), &item) != nil || item["value_size"] != float64(len(value)) {
				t.Errorf("-o json: exit %d: %s", r.Code, r.Stdout)
			}
			r = clitest.Run(t, env, "quarantine", "get", "1", "-o", "table")
			if r.Code != 0 || !strings.Contains(r.Stdout, `a\u202eb`) || !strings.Contains(r.Stdout, sha256Hex(string(value))) ||
				strings.ContainsRune(r.Stdout, 0x1b) || strings.ContainsRune(r.Stdout, 0x202e) {
				t.Errorf("table: exit %d:\n%s", r.Code, r.Stdout)
			}
			if r := clitest.Run(t, env, "quarantine", "get", "999"); r.Code != cmdutil.ExitNotFound {
				t.Errorf("missing record: exit %d, want %d: %s", r.Code, cmdutil.ExitNotFound, r.Stderr)
			}
		})
	}
}
