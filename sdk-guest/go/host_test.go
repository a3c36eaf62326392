package guest

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestLogPassesLevelAndCutsLongMessages(t *testing.T) {
	var gotLevel int32
	var gotMsg string
	hostLog = func(level int32, msg string) int32 { gotLevel, gotMsg = level, msg; return Ok }
	defer func() { hostLog = func(int32, string) int32 { return Ok } }()

	if err := Logf(Warning, "%d items", 3); err != nil || gotLevel != 3 || gotMsg != "3 items" {
		t.Fatalf("Logf: err %v, level %d, msg %q", err, gotLevel, gotMsg)
	}
	long := strings.Repeat("é", maxMessage) // two bytes each
	if err := Log(Info, long); err != nil {
		t.Fatal(err)
	}
	if len(gotMsg) > maxMessage || !utf8.ValidString(gotMsg) || len(gotMsg) < maxMessage-1 {
		t.Errorf("a long message became %d bytes (valid UTF-8: %v)", len(gotMsg), utf8.ValidString(gotMsg))
	}
}

func TestHostRefusalsBecomeErrors(t *testing.T) {
	hostProgress = func(float64, float64, string) int32 { return ErrOrder }
	defer func() { hostProgress = func(float64, float64, string) int32 { return Ok } }()
	err := Progress(1, 2, "")
	var he *HostError
	if !errors.As(err, &he) || he.Code != ErrOrder || !strings.Contains(err.Error(), "did not increase") {
		t.Fatalf("Progress = %v; want a HostError ErrOrder", err)
	}
	if got := (&HostError{Code: 42}).Error(); !strings.Contains(got, "42") {
		t.Errorf("unknown code text = %q", got)
	}
}
