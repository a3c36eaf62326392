package registry

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/yosida95/uritemplate/v3"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/internal/observe"
	"github.com/wasmcp/wasmcp/internal/sandbox"
	"github.com/wasmcp/wasmcp/internal/schema"
)

// Module is one loaded .wasm file.
type Module struct {
	// Path is the module's file.
	Path string
	// Stem is the file name without ".wasm"; it is argv[0] of every run.
	Stem string
	// SHA256 is the hex digest of the module's bytes.
	SHA256 string
	// Size is the module file's size in bytes.
	Size int
	// ManifestFrom says where the manifest came from: the sidecar's path, or
	// "embedded" for the custom section.
	ManifestFrom string
	// Manifest is the module's checked manifest.
	Manifest *abi.Manifest
	// Limits are the module's effective limits: its manifest's, clamped to
	// the server's ceilings.
	Limits sandbox.Limits

	// key identifies the module's content: its bytes and its sidecar's;
	// inputs, what else it was loaded with (its engine compiles it). A
	// reload keeps a module whose key and inputs are unchanged, compiled
	// code and all.
	key       string
	inputs    loadInputs
	tools     []*Tool
	resources []*Resource
	templates []*Template
	prompts   []*Prompt
	// reader is the module's resources/read entry point; nil when every
	// resource it declares has its contents in the manifest.
	reader *Tool
	// completer is the module's completion/complete entry point; nil
	// unless a prompt or template of its has the module complete it.
	completer *Tool
	observer  observe.Observer
	log       *slog.Logger

	// cached says that the module's code was in the compilation cache
	// when it loaded (sandbox.Engine.Cached), so that the warm-up loads
	// it before it compiles the others.
	cached bool

	wasm    []byte
	once    sync.Once
	done    chan struct{}
	program *sandbox.Compiled
	err     error
	// needed is closed when a caller first waits for the compiled code:
	// until then, a compilation the warm-up started is one made ahead of
	// need, which waits behind, and gives way to, those callers wait for.
	needed     chan struct{}
	neededOnce sync.Once

	// retiring is closed when the module is retired: a snapshot of it
	// that is being made stops, as only the runs already going may use it.
	// unused is closed when it is freed: its compilation stops, as no run
	// can wait for it any more.
	retiring, unused chan struct{}

	// users counts runs in progress; a retired module's code is freed when
	// the last one ends.
	mu      sync.Mutex
	users   int
	retired bool
	freed   bool
}

// Acquire marks the start of a run. It returns false once the module has
// been retired and freed: the caller then looks the tool up again, and runs
// the version that replaced it.
func (m *Module) Acquire() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.freed {
		return false
	}
	m.users++
	return true
}

// Release marks the end of a run begun with Acquire.
func (m *Module) Release() {
	m.mu.Lock()
	m.users--
	free := m.retired && m.users == 0 && !m.freed
	if free {
		m.freed = true
	}
	m.mu.Unlock()
	if free {
		m.free()
	}
}

// retire frees the module's compiled code once no run uses it, and stops
// the snapshot being made of it, if one is. Runs already going finish on
// it, without the snapshot if it was stopped; later lookups find its
// successor.
func (m *Module) retire() {
	m.mu.Lock()
	if !m.retired {
		close(m.retiring)
	}
	m.retired = true
	free := m.users == 0 && !m.freed
	if free {
		m.freed = true
	}
	m.mu.Unlock()
	if free {
		m.free()
	}
}

func (m *Module) free() {
	// A compilation still running stops; what it made, if it finished
	// first, is then freed.
	close(m.unused)
	go func() {
		m.once.Do(func() { close(m.done) })
		<-m.done
		if m.program != nil {
			_ = m.program.Close(context.Background())
		}
	}()
}

// Compiled returns the compiled module, compiling it on first use. Calls
// that arrive during compilation wait for it, or for ctx; a compilation
// the warm-up started is from then on one a caller waits for.
func (m *Module) Compiled(ctx context.Context) (*sandbox.Compiled, error) {
	m.neededOnce.Do(func() { close(m.needed) })
	return m.compiled(ctx)
}

// warm compiles the module ahead of need, if no one has yet.
func (m *Module) warm(ctx context.Context) error {
	_, err := m.compiled(ctx)
	return err
}

func (m *Module) compiled(ctx context.Context) (*sandbox.Compiled, error) {
	m.once.Do(func() {
		go func() {
			defer close(m.done)
			m.log.Debug("compiling module", "file", m.Path, "size", m.Size)
			start := time.Now()
			// The compilation is the module's, shared by every call that
			// waits for it: no one caller's context may end it. The engine
			// bounds it.
			m.program, m.err = m.inputs.engine.CompileWith(context.Background(), m.wasm, sandbox.CompileOptions{Start: m.Manifest.StartKind(), Schedule: sandbox.Schedule{Name: m.Path, Needed: m.needed, Stop: m.unused}})
			d := time.Since(start)
			if errors.Is(m.err, sandbox.ErrStopped) {
				// Not a compilation that failed: the module no longer
				// serves, and its bytes go.
				m.log.Debug("compilation stopped: the module was replaced or removed", "file", m.Path)
				m.err = fmt.Errorf("the module was replaced or removed before it compiled, so it no longer serves: %w", m.err)
				m.wasm = nil
				return
			}
			m.observer.Compiled(m.Path, d, m.err)
			var refused *sandbox.RefusedError
			switch {
			case m.err == nil:
				m.log.Debug("module compiled", "file", m.Path, "duration", d)
				m.wasm = nil // the compiled form is all that is needed now
				m.snapshot()
			case errors.As(m.err, &refused):
				// The error is its gist; all of it is for debugging.
				m.log.Debug("the compiler refused a module", "file", m.Path, "compiler", refused.Compiler)
			}
		}()
	})
	select {
	case <-m.done:
		return m.program, m.err
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// snapshot runs a reactor's start-up once (sandbox.Compiled.Snapshot), so
// that its calls start from what it left. A call that comes meanwhile
// waits for it, as for the compilation, and it is scheduled as the
// compilation is: ahead of need until a caller waits for the module. A
// start-up that fails refuses the module: every call reports why.
func (m *Module) snapshot() {
	if m.Manifest.StartKind() != abi.StartReactor {
		return
	}
	stats, err := m.program.Snapshot(context.Background(), m.Stem, m.Limits, sandbox.Schedule{Name: m.Path, Needed: m.needed, Stop: m.retiring})
	var failed *sandbox.Failure
	switch {
	case errors.Is(err, sandbox.ErrStopped):
		// Its runs still going start up in full, or from the snapshot
		// there was.
		m.log.Debug("snapshot stopped: the module was replaced or removed", "file", m.Path)
	case errors.Is(err, sandbox.ErrNoSnapshot):
		m.log.Info("reactor runs its start-up in every call", "file", m.Path, "reason", err)
	case errors.As(err, &failed):
		m.log.Error("module refused: its start-up failed, so every call of it fails", "file", m.Path, "reason", err)
	case err != nil:
		// The engine closed, or the snapshot could not be kept: calls
		// run the start-up themselves, or from the snapshot there was.
		m.log.Warn("reactor not snapshotted", "file", m.Path, "reason", err)
	default:
		m.log.Info("module snapshotted", "file", m.Path, "memory", stats.Memory, "globals", stats.Globals, "duration", stats.Duration)
	}
}

// resnapshot makes the module's snapshot again, if it has been compiled:
// a module compiled later is snapshotted then.
func (m *Module) resnapshot() {
	select {
	case <-m.done:
	default:
		return
	}
	if m.err != nil || !m.Acquire() {
		return
	}
	defer m.Release()
	m.snapshot()
}

// Resource is one resource a module declares.
type Resource struct {
	Module *Module
	Spec   abi.Resource
}

// Template is one resource template a module declares, parsed.
type Template struct {
	Module *Module
	Spec   abi.ResourceTemplate
	// Match is the parsed template, which matches URIs as the MCP SDK
	// does.
	Match *uritemplate.Template
}

func (t *Tool) module() *Module { return t.Module }

// Tool is one tool of a module, with its schemas compiled.
type Tool struct {
	Module *Module
	Spec   abi.Tool
	Input  *schema.Schema
	Output *schema.Schema // nil when the tool declares no outputSchema
}
