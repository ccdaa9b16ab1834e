package main

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hubctl/hubctl/internal/testutil/receivertest"
)

func TestReceiver(t *testing.T) {
	var out receivertest.Buffer
	server := httptest.NewServer(newReceiver(strings.Split(receivertest.Secrets, ","), &out))
	defer server.Close()
	receivertest.Check(t, server.URL, out.String)
}
