package service_test

import (
	"testing"

	"github.com/hubctl/hubctl/internal/testutil/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }
