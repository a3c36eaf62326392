package registry

import (
	"fmt"
	"log/slog"
	"path/filepath"
	"sort"

	"github.com/wasmcp/wasmcp/internal/policy"
)

// loaded is what reading one module file of the directory gave: a module,
// or why there is none, and the stamp of the files read. reused: the
// files were not read again, and this is what the previous reload made of
// them.
type loaded struct {
	path   string
	m      *Module
	err    error
	stamp  stamp
	reused bool
	// sigs are the module's files' signatures, for the policy to verify.
	sigs *signatures
}

// policyRead is what reading the policy file gave: a policy and the hash
// of the file's content, or why there is none. A registry without a policy
// file reads it as a nil policy and no error.
type policyRead struct {
	path string
	p    *policy.Policy
	hash string
	err  error
}

// plan works out the catalog that follows prev, given what the directory
// and the policy file hold now. It reads nothing and changes nothing, so
// each of its rules is tested on its own:
//
//   - a module whose bytes and sidecar are unchanged (the same key), loaded
//     with the same inputs, is kept as it is, compiled code and all;
//   - what each file gave (the module served from it, or why none loads) is
//     kept with the catalog with its stamp, so that the next scan need not
//     read the file if the stamp holds; a file that could not be read has
//     no stamp, and is read again;
//   - a changed module replaces its previous version;
//   - the policy is settled first, as the modules are verified under it:
//     a module whose policy requires a signature serves only if one by a
//     named key verifies over each of its files, and otherwise does not
//     load;
//   - a file that no longer loads keeps its previous version serving, if
//     that version's signatures verify under the policy now in force, and
//     the error is recorded: a broken update must not take down a working
//     tool, and a half-written file is only ever a broken version, but a
//     version the policy would refuse today does not keep serving;
//   - a file that no longer exists is removed;
//   - when two modules declare the same tool name, the file whose name
//     sorts first keeps it;
//   - a policy whose content is unchanged is kept as it is (so calls
//     prepared under it stay valid); a changed one replaces it; one that
//     no longer loads keeps the previous policy, and the error is
//     recorded.
//
// With no previous catalog, a file that does not load is skipped and
// recorded, and so is a policy (the caller refuses to start without one).
// plan returns the modules of prev that next no longer uses: the caller
// retires them once next is in service.
func plan(prev *Catalog, files []loaded, pol policyRead, log *slog.Logger) (next *Catalog, unused []*Module) {
	previous := map[string]*Module{}
	var prevSigs map[string]*signatures
	if prev != nil {
		for _, m := range prev.Modules {
			previous[m.Path] = m
		}
		prevSigs = prev.sigs
	}
	next = &Catalog{byName: map[string]*Tool{}, byURI: map[string]*Resource{}, byTemplate: map[string]*Template{}, byPrompt: map[string]*Prompt{}, loads: map[string]loaded{}, sigs: map[string]*signatures{}}
	switch {
	case pol.err != nil && prev != nil:
		err := fmt.Errorf("the policy does not load, so the previous one keeps granting: %w", pol.err)
		log.Warn("keeping the previous policy", "file", pol.path, "reason", err)
		next.Errors = append(next.Errors, LoadError{Path: pol.path, Err: err})
		next.Policy, next.policyHash = prev.Policy, prev.policyHash
	case pol.err != nil:
		next.Errors = append(next.Errors, LoadError{Path: pol.path, Err: pol.err})
	case prev != nil && pol.hash == prev.policyHash:
		next.Policy, next.policyHash = prev.Policy, prev.policyHash
	default:
		if prev != nil {
			log.Info("policy changed", "file", pol.path)
		}
		next.Policy, next.policyHash = pol.p, pol.hash
	}

	// verified: sigs are those the version serving from path served
	// with, under the same policy, so they verify without a look, which
	// would take a reload of a large directory some tens of milliseconds
	// (BenchmarkPlan200SignedModules).
	verified := func(path string, sigs *signatures) bool {
		return prev != nil && next.Policy == prev.Policy && sigs != nil && sigs == prevSigs[path]
	}

	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	kept := map[*Module]bool{}
	for _, f := range files {
		old := previous[f.path]
		m, sigs, err := f.m, f.sigs, f.err
		if err == nil && !verified(f.path, sigs) {
			err = sigs.verify(next.Policy, m.Stem, filepath.Base(f.path))
		}
		var oldErr error
		if err != nil && old != nil && !verified(f.path, prevSigs[f.path]) {
			oldErr = prevSigs[f.path].verify(next.Policy, old.Stem, filepath.Base(f.path))
		}
		switch {
		case err != nil && old != nil && oldErr == nil:
			err := fmt.Errorf("the new version does not load, so the previous one (sha256 %s) keeps serving: %w", old.SHA256[:12], err)
			log.Warn("keeping the previous version of a module", "file", f.path, "reason", err)
			next.Errors = append(next.Errors, LoadError{Path: f.path, Err: err})
			m, sigs = old, prevSigs[f.path]
		case err != nil:
			if old != nil && (m == nil || m.key != old.key) {
				err = fmt.Errorf("%w; and the previous version (sha256 %s) may not serve either: %w", err, old.SHA256[:12], oldErr)
			}
			log.Warn("skipping module", "file", f.path, "reason", err)
			next.Errors = append(next.Errors, LoadError{Path: f.path, Err: err})
			m = nil
		case old != nil && old.key == m.key && old.inputs == m.inputs:
			m, f.m = old, old // the copy just read, and its bytes, go
		default:
			log.Info("loaded module", "file", f.path, "manifest", m.ManifestFrom, "tools", len(m.tools), "resources", len(m.resources)+len(m.templates), "prompts", len(m.prompts), "sha256", m.SHA256[:12])
		}
		if f.stamp.ok {
			next.loads[f.path] = f
		}
		if m == nil {
			continue
		}
		kept[m] = true
		next.sigs[f.path] = sigs
		next.add(m, log)
	}
	sort.Slice(next.Tools, func(i, j int) bool { return next.Tools[i].Spec.Name < next.Tools[j].Spec.Name })
	sort.Slice(next.Resources, func(i, j int) bool { return next.Resources[i].Spec.URI < next.Resources[j].Spec.URI })
	sort.Slice(next.Templates, func(i, j int) bool { return next.Templates[i].Spec.URITemplate < next.Templates[j].Spec.URITemplate })
	sort.Slice(next.Prompts, func(i, j int) bool { return next.Prompts[i].Spec.Name < next.Prompts[j].Spec.Name })
	if prev != nil {
		for _, m := range prev.Modules {
			if !kept[m] {
				unused = append(unused, m)
			}
		}
	}
	return next, unused
}
