// Command freshness is a probe of what a Go reactor sees in each call made
// from one snapshot: the e2e tests build it with -buildmode=c-shared, call
// it twice, and check what must differ (fresh) and what a package
// computed at its start-up, which no SDK can renew (frozen), as the SDK's
// README lists.
package main

import (
	"crypto/rand"
	"encoding/hex"
	"hash/maphash"
	mathrand "math/rand"
	randv2 "math/rand/v2"
	"os"
	"strconv"
	"time"

	guest "github.com/wasmcp/wasmcp/sdk-guest/go"
)

// startedAt is computed at init, in a reactor by the snapshot's start-up.
var startedAt = time.Now().UnixNano()

type report struct {
	Args   []string          `json:"args"`
	Fresh  map[string]string `json:"fresh"`
	Frozen map[string]string `json:"frozen"`
}

func probe(struct{}) (report, error) {
	key := make([]byte, 16)
	_, _ = rand.Read(key)
	// Each walk of a small map starts at one of its 8 slots, drawn from
	// the runtime's generator: ten walks, so that two calls agree by
	// chance once in 8^10.
	order := ""
	m := map[int]bool{0: true, 1: true, 2: true, 3: true, 4: true, 5: true, 6: true, 7: true}
	for range 10 {
		for k := range m {
			order += strconv.Itoa(k)
		}
	}
	return report{
		Args: os.Args,
		Fresh: map[string]string{
			"crypto/rand":  hex.EncodeToString(key),
			"math/rand":    strconv.FormatInt(mathrand.Int63(), 10),
			"math/rand/v2": strconv.FormatUint(randv2.Uint64(), 10),
			"map order":    order,
			"maphash":      strconv.FormatUint(maphash.String(maphash.MakeSeed(), "x"), 10),
			"guest.Rand":   strconv.FormatInt(guest.Rand().Int63(), 10),
			"time.Now":     strconv.FormatInt(time.Now().UnixNano(), 10),
		},
		Frozen: map[string]string{
			"init time": strconv.FormatInt(startedAt, 10),
		},
	}, nil
}

func init() { guest.Register(guest.JSON("freshness", probe)) }

func main() { guest.Main() }
