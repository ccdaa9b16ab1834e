package main

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/testutil/receivertest"
	"github.com/hubctl/hubctl/internal/testutil/syncbuf"
)

func TestReceiver(t *testing.T) {
	var out syncbuf.Buffer
	server := httptest.NewServer(newReceiver(strings.Split(receivertest.Secrets, ","), &out))
	defer server.Close()
	receivertest.Check(t, server.URL, out.String)
}
