package sandbox

import (
	"context"
	"encoding/binary"
	"time"
)

// WASI errno values that the host's own WASI functions return.
const (
	errnoBadf   = 8
	errnoFault  = 21
	errnoIntr   = 27
	errnoInval  = 28
	errnoNosys  = 52
	errnoNotsup = 58
	errnoPerm   = 63
)

// maxIovecs bounds one read's or write's iovec array, as IOV_MAX bounds
// readv(2).
const maxIovecs = 1024

// ioArgs checks the arguments of fd_read, fd_write, fd_pread and
// fd_pwrite, the same on both engines and before any work: where the
// count goes, the iovec array, and every buffer it names must be within
// memory, and there may be at most maxIovecs buffers. wazero's own would
// wrap a huge count around 32 bits, and wasmtime's would allocate a
// buffer of the size it is given before checking it. It returns the
// array, for iovec to read. A guest without memory gets EFAULT.
func ioArgs(mem guestMemory, iovs, n, countPtr uint32) ([]byte, uint16) {
	if mem == nil {
		return nil, errnoFault
	}
	if _, ok := mem.Read(countPtr, 4); !ok || uint64(n)*8 > 1<<32-1 {
		return nil, errnoFault
	}
	table, ok := mem.Read(iovs, n*8)
	if !ok {
		return nil, errnoFault
	}
	if n > maxIovecs {
		return nil, errnoInval
	}
	for i := range int(n) {
		if _, ok := mem.Read(iovec(table, i)); !ok {
			return nil, errnoFault
		}
	}
	return table, 0
}

// iovec is the i'th buffer of an iovec array: where it is, and its size.
func iovec(table []byte, i int) (ptr, size uint32) {
	return binary.LittleEndian.Uint32(table[8*i:]), binary.LittleEndian.Uint32(table[8*i+4:])
}

// maxSubscriptions bounds one poll_oneoff call, as RLIMIT_NOFILE bounds
// poll(2): WASI guests poll a handful of descriptors and a clock.
const maxSubscriptions = 4096

// subscription is one poll_oneoff subscription, read out of guest memory
// before any event is written, so that events may overwrite the
// subscriptions they answer.
type subscription struct {
	userdata [8]byte
	tag      byte
	errno    uint16        // the event's error, or 0
	pending  bool          // a clock, not due yet
	wait     time.Duration // for a clock, from now
}

// pollOneoff is WASI's poll_oneoff, one implementation for both engines,
// which replaces each engine's own: wasmtime's sleeps in the host, deaf to
// the epochs that stop a run, and wazero's, given only subscriptions on a
// descriptor that is not open, sleeps until the time limit.
//
// A subscription on a descriptor is ready at once (nothing here blocks:
// stdin is in memory, or blocks in fd_read itself, and output never
// waits), or fails with EBADF if open says the descriptor is not open. A
// clock subscription is relative, or absolute on the realtime clock (the
// only one whose origin both engines share); other flags and clocks fail
// with EINVAL or ENOTSUP. Subscriptions that are ready or failed are
// reported at once; only when none is does the call wait, in real time,
// for the soonest clock or until ctx ends (then ended is true and nothing
// is written). A guest without memory gets EFAULT.
func pollOneoff(ctx context.Context, mem guestMemory, open func(fd uint32) bool, in, out, nsubs, neventsPtr uint32) (errno uint16, ended bool) {
	const subSize, eventSize = 48, 32
	if nsubs == 0 {
		return errnoInval, false
	}
	if mem == nil || uint64(nsubs)*subSize > 1<<32-1 {
		return errnoFault, false
	}
	raw, ok1 := mem.Read(in, nsubs*subSize)
	events, ok2 := mem.Read(out, nsubs*eventSize)
	_, ok3 := mem.Read(neventsPtr, 4)
	if !ok1 || !ok2 || !ok3 {
		return errnoFault, false
	}
	if nsubs > maxSubscriptions {
		return errnoInval, false
	}
	subs := make([]subscription, nsubs)
	ready := 0
	for i := range subs {
		s, sub := raw[i*subSize:(i+1)*subSize], &subs[i]
		copy(sub.userdata[:], s)
		sub.tag = s[8]
		switch sub.tag {
		case 0: // clock
			id, timeout, flags := binary.LittleEndian.Uint32(s[16:]), binary.LittleEndian.Uint64(s[24:]), binary.LittleEndian.Uint16(s[40:])
			timeout = min(timeout, 1<<62)
			switch {
			case flags > 1 || id > 1:
				sub.errno = errnoInval
			case flags == 0:
				sub.pending, sub.wait = true, time.Duration(timeout)
			case id == 0: // absolute, on the realtime clock
				sub.pending, sub.wait = true, max(time.Until(time.Unix(0, int64(timeout))), 0)
			default:
				sub.errno = errnoNotsup
			}
		case 1, 2: // fd_read, fd_write
			if !open(binary.LittleEndian.Uint32(s[16:])) {
				sub.errno = errnoBadf
			}
		default:
			sub.errno = errnoInval
		}
		if !sub.pending {
			ready++
		}
	}
	if ready == 0 {
		soonest := subs[0].wait
		for _, s := range subs[1:] {
			soonest = min(soonest, s.wait)
		}
		t := time.NewTimer(soonest)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return errnoIntr, true
		}
		for i := range subs {
			subs[i].pending = subs[i].wait > soonest
		}
	}
	n := 0
	for _, s := range subs {
		if s.pending {
			continue
		}
		e := events[n*eventSize : (n+1)*eventSize]
		clear(e)
		copy(e, s.userdata[:])
		binary.LittleEndian.PutUint16(e[8:], s.errno)
		e[10] = s.tag
		n++
	}
	mem.WriteUint32Le(neventsPtr, uint32(n))
	return 0, false
}
