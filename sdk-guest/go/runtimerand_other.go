//go:build !wasip1

package guest

// randWords is the runtime generator's state, which only a wasip1 build
// (one thread, one generator) can renew.
type randWords struct{}

func findRuntimeRand() *randWords { return nil }

func (*randWords) renew() {}
