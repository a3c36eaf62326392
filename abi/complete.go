package abi

import "fmt"

// EntryComplete is argv[1] of a run that completes an argument of one of
// the module's prompts or a variable of one of its resource templates
// (docs/abi.md, "Completions"). No tool may have this name.
const EntryComplete = "completion/complete"

// CompleteModule is the value of a prompt's or a template's "complete"
// that has the module's completion/complete entry point offer values for
// each argument or variable that declares none.
const CompleteModule = "module"

// MaxCompletionValues is how many values one completion answer holds at
// most, as MCP says.
const MaxCompletionValues = 100

func checkComplete(v string) error {
	if v != "" && v != CompleteModule {
		return fmt.Errorf(`"complete" may only be %q, not %q`, CompleteModule, v)
	}
	return nil
}

// DeclaresCompletions says whether the manifest declares values for
// completion/complete, or has its module offer them.
func (m *Manifest) DeclaresCompletions() bool {
	for _, p := range m.Prompts {
		if p.Complete == CompleteModule {
			return true
		}
		for _, a := range p.Arguments {
			if len(a.Completions) > 0 {
				return true
			}
		}
	}
	for _, t := range m.ResourceTemplates {
		if len(t.Completions) > 0 || t.Complete == CompleteModule {
			return true
		}
	}
	return false
}
