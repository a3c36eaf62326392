package sandbox

import (
	"slices"
	"unicode/utf8"
)

// What a run keeps of its denials. A guest may be refused millions of
// times within its time limit, each time for a permission in words it
// chose (a URL of 2 MiB), and every denial waits in the host for the
// call's error text and log line: so a run keeps a few, cut short, and
// counts the rest.
const (
	// MaxDenials is how many distinct denials a run keeps.
	MaxDenials = 8
	// MaxDenialLen is how long a kept denial may be, in bytes.
	MaxDenialLen = 256
)

// Denials are the permissions a run lacked: the first MaxDenials distinct
// ones, each cut to MaxDenialLen bytes, and the count of the others.
type Denials struct {
	// Kept are the first distinct denials, in the order they came.
	Kept []string
	// More counts the denials not kept: those that came once Kept was
	// full and are not in it.
	More int
}

// Add records that a permission was lacked.
func (d *Denials) Add(permission string) {
	permission = clip(permission, MaxDenialLen)
	switch {
	case slices.Contains(d.Kept, permission):
	case len(d.Kept) < MaxDenials:
		d.Kept = append(d.Kept, permission)
	default:
		d.More++
	}
}

// Empty reports whether nothing was denied.
func (d Denials) Empty() bool { return len(d.Kept) == 0 && d.More == 0 }

// clip returns s if it is at most n bytes, and otherwise its start and its
// end with "…" between them, n bytes in all, cut between characters. The
// end stays because a denial's last words say what was lacking (a method,
// a port, "no http grant") when a guest made its middle long.
func clip(s string, n int) string {
	const mark = "…"
	if len(s) <= n {
		return s
	}
	room := max(n-len(mark), 0)
	head, tail := room*2/3, room-room*2/3
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	end := len(s) - tail
	for end < len(s) && !utf8.RuneStart(s[end]) {
		end++
	}
	return s[:head] + mark + s[end:]
}
