package guest

import (
	"crypto/rand"
	"encoding/binary"
	"io"
	mathrand "math/rand"
	"os"
	"slices"
	"strings"
)

// registered are the tools Register made the module's.
var registered []Tool

// Register makes tools the module's, for a reactor build (below) and for
// Main called with no tools. Call it from an init function or a
// package-level variable's initialiser: in a reactor, main never runs.
//
// A reactor is built with
//
//	GOOS=wasip1 GOARCH=wasm go build -buildmode=c-shared
//
// and declared with "start": "reactor" in its manifest. The host then runs
// Go's start-up (the runtime, every package's init) once, when it loads
// the module, and starts each call from what that left: a call costs a
// fraction of a millisecond instead of a Go runtime's start. This package
// exports the functions the host calls (wasmcp_init, wasmcp_run), and
// before each call reads the call's arguments and environment into
// os.Args and the process environment, and renews the Go runtime's
// generator, from which math/rand and math/rand/v2's top-level
// functions, map iteration order and hash/maphash seeds draw. What it
// cannot renew is listed in the README ("Reactors"): anything a package
// computed at init repeats from call to call. Draw what must differ in
// the call, with crypto/rand or Rand.
func Register(tools ...Tool) { registered = append(registered, tools...) }

// Rand returns a generator seeded from crypto/rand in this call, for what
// must differ from call to call in a reactor, where math/rand/v2's
// top-level functions repeat.
func Rand() *mathrand.Rand {
	var seed [8]byte
	_, _ = rand.Read(seed[:])
	return mathrand.New(mathrand.NewSource(int64(binary.LittleEndian.Uint64(seed[:]))))
}

// runtimeGen is the Go runtime's generator, once warmAll has found it
// (findRuntimeRand), which each call renews.
var runtimeGen *randWords

// warmAll does each registered tool's one-off work, in a reactor's
// start-up, so that every call starts with it done, and finds the
// runtime's generator, which each call then renews: math/rand/v2,
// math/rand's top-level functions, map order and hash/maphash all draw
// from it. Where it is not found (a Go whose runtime keeps it otherwise),
// it sets GODEBUG=randseednop=0 instead, which makes the deprecated
// rand.Seed take effect, the one way left to give math/rand's top-level
// functions a new seed in each call; it seeds once here because the
// runtime reparses every GODEBUG setting whenever the variable changes,
// and registers a setting's metric at its first use, which from a
// snapshot would cost each call most of a millisecond.
func warmAll() {
	// crypto/rand's first read in a process sets it up (sysrand starts a
	// timer to warn should the host's source block): done here, so that
	// no call does it again, which cost 40 of a call's 200 µs. Nothing
	// of it repeats from call to call: every read asks the host (with
	// GODEBUG=fips140=on, the DRBG the snapshot holds mixes 128 fresh
	// bits from the host into every read).
	var b [8]byte
	_, _ = rand.Read(b[:])
	if runtimeGen = findRuntimeRand(); runtimeGen == nil {
		os.Setenv("GODEBUG", "randseednop=0")
		reseed()
	}
	for _, t := range registered {
		if t.warm != nil {
			t.warm()
		}
	}
}

// reseed renews the runtime's generator, or without it gives math/rand's
// top-level functions a seed from crypto/rand, while
// GODEBUG=randseednop=0 holds (warmAll).
func reseed() {
	if runtimeGen != nil {
		runtimeGen.renew()
		return
	}
	var seed [8]byte
	_, _ = rand.Read(seed[:])
	mathrand.Seed(int64(binary.LittleEndian.Uint64(seed[:]))) //nolint:staticcheck // see warmAll
}

// runCall is one call of a reactor: the call's context in, then the
// registered tools run as Main runs them. It returns the exit status.
func runCall(args, env []string, stdin io.Reader, stdout, stderr io.Writer) int {
	reseed()
	// The environment becomes the call's; a change makes the runtime
	// reparse its GODEBUG settings, so an environment that is already the
	// call's (an empty one, mostly) is left alone. Clearing it drops any
	// GODEBUG warmAll set, before the tool runs.
	os.Args = args
	if !slices.Equal(os.Environ(), env) {
		os.Clearenv()
		for _, kv := range env {
			if k, v, ok := strings.Cut(kv, "="); ok {
				os.Setenv(k, v)
			}
		}
	}
	return run(os.Args, stdin, stdout, stderr, registered, false)
}
