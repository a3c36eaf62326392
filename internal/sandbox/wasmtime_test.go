//go:build wasmtime && cgo

package sandbox

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/wasmcp/wasmcp/internal/wattest"
)

func TestByteMemoryChecksBounds(t *testing.T) {
	m := byteMemory(make([]byte, 16))
	for _, tc := range []struct {
		offset, n uint32
		ok        bool
	}{
		{0, 16, true}, {12, 4, true}, {16, 0, true},
		{13, 4, false}, {17, 0, false}, {0xffffffff, 2, false}, {1, 0xffffffff, false},
	} {
		if _, ok := m.Read(tc.offset, tc.n); ok != tc.ok {
			t.Errorf("Read(%d, %d) ok = %v; want %v", tc.offset, tc.n, ok, tc.ok)
		}
	}
	if m.WriteUint32Le(13, 1) || !m.WriteUint32Le(12, 0x04030201) || m[15] != 4 {
		t.Errorf("WriteUint32Le: %v", m[12:])
	}
	if m.Write(10, make([]byte, 7)) || !m.Write(10, []byte("abcdef")) || string(m[10:]) != "abcdef" {
		t.Errorf("Write: %q", m[10:])
	}
	if m, ok := byteMemory(nil).Read(0, 1); ok || m != nil {
		t.Error("an empty memory read succeeded")
	}
}

func TestWasmtimeRunsWithoutMountsCanBePrepared(t *testing.T) {
	p := &wasmtimeProgram{}
	if !p.prepares(Run{}) || p.prepares(Run{Mounts: []Mount{{Host: "/", Guest: "/"}}}) {
		t.Fatal("prepares: want true without mounts, false with")
	}
}

// The engines must agree on what a module may import, and with which
// types: wasmtime's shadows of WASI are typed by hand, and a module
// loading on one engine must load on the other.
func TestEnginesProvideTheSameImports(t *testing.T) {
	ctx := context.Background()
	wz, err := newWazero(ctx, Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer wz.close(ctx)
	b, err := newWasmtime(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.close(ctx)
	wtb := b.(*wasmtimeBackend)
	mounted, err := linked(wtb.engine, wtb.mounted)
	if err != nil {
		t.Fatal(err)
	}
	for what, got := range map[string]provided{"wasmtime": wtb.provides(), "wasmtime with mounts": mounted} {
		for module, funcs := range wz.provides() {
			if len(got[module]) != len(funcs) {
				t.Errorf("%s defines %d functions of %s; wazero %d", what, len(got[module]), module, len(funcs))
			}
			for name, want := range funcs {
				if have, ok := got[module][name]; !ok || !have.Equal(want) {
					t.Errorf("%s defines %s.%s as %v; wazero as %v", what, module, name, have, want)
				}
			}
		}
	}
}

// Servers and their compile workers share a cache directory, and each
// process points wasmtime at it as it starts.
func TestEnginesStartTogetherOnOneCacheDir(t *testing.T) {
	dir := wattest.CacheDir(t)
	errs := make(chan error, 16)
	for range cap(errs) {
		go func() {
			b, err := newWasmtime(Config{CacheDir: dir})
			if err == nil {
				b.close(context.Background())
			}
			errs <- err
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	if leftover, _ := filepath.Glob(filepath.Join(dir, "*.toml")); len(leftover) != 0 {
		t.Errorf("configuration files left in the cache directory: %v", leftover)
	}
}
