package sandbox

import (
	"context"
	"testing"

	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/wattest"
)

// FuzzHostFunctions calls log and progress as a hostile guest could, with
// any level, pointer, length and memory contents: the host must never
// panic, must accept only what the ABI allows, and must pass on exactly
// the bytes the guest named. It calls the WASI functions the host
// implements itself the same way: they must never panic, nor accept
// arguments outside memory, nor report more events than subscriptions.
func FuzzHostFunctions(f *testing.F) {
	ctx := context.Background()
	rt := wazero.NewRuntime(ctx)
	defer rt.Close(ctx)
	cm, err := rt.CompileModule(ctx, wattest.Build(f, "loop"))
	if err != nil {
		f.Fatal(err)
	}
	// Instantiated without running _start: only its memory is wanted.
	mod, err := rt.InstantiateModule(ctx, cm, wazero.NewModuleConfig().WithStartFunctions())
	if err != nil {
		f.Fatal(err)
	}
	mem := mod.Memory()
	// A poll that would wait returns at once: its run has ended.
	ended, cancel := context.WithCancel(ctx)
	cancel()
	stdio := func(fd uint32) bool { return fd <= 2 }

	f.Add(int32(1), uint32(0), uint32(5), []byte("hello"), 1.0, 10.0, uint32(512))
	f.Add(int32(9), uint32(65530), uint32(100), []byte{0xff, 0xfe}, -1.0, -1.0, uint32(0))
	f.Add(int32(0), uint32(0xfffffff0), uint32(0x20), []byte("x"), 0.0, 0.0, uint32(0xffffffff))
	f.Add(int32(0), uint32(0), uint32(2), []byte("\x07\x00\x00\x00\x00\x00\x00\x00\x01"), 0.0, 0.0, uint32(64))
	f.Add(int32(0), uint32(0), uint32(0x10000001), []byte{}, 0.0, 0.0, uint32(256))
	f.Fuzz(func(t *testing.T, level int32, ptr, length uint32, content []byte, progress, total float64, other uint32) {
		if len(content) > 1024 {
			content = content[:1024]
		}
		mem.Write(0, make([]byte, 1024))
		mem.Write(0, content)
		rec := &recorder{}
		st := &runState{reporter: rec, lastProgress: progress - 1}
		runCtx := context.WithValue(ctx, runStateKey{}, st)

		stack := []uint64{api.EncodeI32(level), api.EncodeU32(ptr), api.EncodeU32(length)}
		hostLog(runCtx, mod, stack)
		code := api.DecodeI32(stack[0])
		if code == abi.Ok {
			if level < abi.LevelDebug || level > abi.LevelEmergency || length > abi.MaxMessageLen {
				t.Fatalf("log accepted level %d, length %d", level, length)
			}
			view, ok := mem.Read(ptr, length)
			if !ok || len(rec.logs) != 1 || rec.logs[0] != string(view) {
				t.Fatalf("log passed on %q; the guest named %q", rec.logs, view)
			}
		} else if len(rec.logs) != 0 {
			t.Fatalf("log refused with %d but passed the message on", code)
		}

		stack = []uint64{api.EncodeF64(progress), api.EncodeF64(total), api.EncodeU32(ptr), api.EncodeU32(length)}
		hostProgress(runCtx, mod, stack)
		if code := api.DecodeI32(stack[0]); code == abi.Ok && len(rec.progress) != 1 {
			t.Fatalf("progress accepted but not passed on")
		} else if code != abi.Ok && len(rec.progress) != 0 {
			t.Fatalf("progress refused with %d but passed on", code)
		}

		// fd_write's iovecs at ptr, length of them, the count at other.
		if table, errno := ioArgs(mem, ptr, length, other); errno == 0 {
			if length > maxIovecs {
				t.Fatalf("ioArgs accepted %d iovecs", length)
			}
			for i := range int(length) {
				if _, ok := mem.Read(iovec(table, i)); !ok {
					t.Fatalf("ioArgs accepted iovec %d outside memory", i)
				}
			}
		}
		// poll_oneoff's length subscriptions at ptr, events at other, the
		// count after them.
		if errno, _ := pollOneoff(ended, mem, stdio, ptr, other, length, other+length*32); errno == 0 {
			n, ok := mem.ReadUint32Le(other + length*32)
			if !ok || n > length {
				t.Fatalf("poll_oneoff of %d subscriptions reported %d events (ok %v)", length, n, ok)
			}
		}
	})
}
