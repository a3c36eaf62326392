package abi

import (
	"errors"
	"fmt"
	"regexp"
)

// MaxPrompts bounds the prompts one module may declare.
const MaxPrompts = 256

// MaxPromptArguments bounds the arguments of one prompt.
const MaxPromptArguments = 64

// MaxMessages bounds the messages of a prompt: a declared one's, and those
// a module's prompts/get returns.
const MaxMessages = 100

// EntryGetPrompt is argv[1] of a run that gets one of the module's prompts
// (docs/abi.md, "Getting a prompt"). No tool may have this name.
const EntryGetPrompt = "prompts/get"

// argumentName is the rule for a prompt argument's name, which a
// template's placeholders ({{name}}) spell.
var argumentName = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)

// placeholder is a template's reference to an argument.
var placeholder = regexp.MustCompile(`\{\{([A-Za-z0-9_.-]{1,64})\}\}`)

// Prompt is a prompt the module serves: MCP's Prompt, plus the messages of
// a prompt served as a template.
type Prompt struct {
	Name        string           `json:"name"`
	Title       string           `json:"title,omitempty"`
	Description string           `json:"description,omitempty"`
	Arguments   []PromptArgument `json:"arguments,omitempty"`
	Icons       []Icon           `json:"icons,omitempty"`
	Meta        Meta             `json:"_meta,omitempty"`
	// Messages make the prompt a template, served without running the
	// module; without them, the module's prompts/get entry point answers.
	Messages []PromptMessage `json:"messages,omitempty"`
	// Complete, when CompleteModule, has the module's completion/complete
	// entry point offer values for the arguments that declare none.
	Complete string `json:"complete,omitempty"`
	// Client names the client capabilities the module's prompts/get
	// entry point may ask for, as Tool.Client does; only for a prompt
	// without Messages.
	Client []string `json:"client,omitempty"`
}

// PromptArgument is one argument of a prompt.
type PromptArgument struct {
	Name        string `json:"name"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Required    bool   `json:"required,omitempty"`
	// Completions are the values completion/complete offers for the
	// argument.
	Completions []string `json:"completions,omitempty"`
}

// PromptMessage is one message of a template: a role and a text, in which
// {{name}} stands for the argument of that name.
type PromptMessage struct {
	Role    string      `json:"role"`
	Content TextContent `json:"content"`
}

// TextContent is MCP's text content block.
type TextContent struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// Expand returns the template's text with each {{name}} replaced by the
// argument's value ("" for an optional argument not given). It is one
// pass, so a value that holds {{name}} is not expanded again.
func (c TextContent) Expand(args map[string]string) string {
	return placeholder.ReplaceAllStringFunc(c.Text, func(p string) string {
		return args[placeholder.FindStringSubmatch(p)[1]]
	})
}

func (m *Manifest) checkPrompts() error {
	if len(m.Prompts) > MaxPrompts {
		return fmt.Errorf("manifest declares %d prompts, over the limit of %d", len(m.Prompts), MaxPrompts)
	}
	seen := make(map[string]bool, len(m.Prompts))
	for i := range m.Prompts {
		p := &m.Prompts[i]
		if err := p.check(); err != nil {
			return fmt.Errorf("prompt %d (%q): %w", i, p.Name, err)
		}
		if seen[p.Name] {
			return fmt.Errorf("prompt %q is declared twice", p.Name)
		}
		seen[p.Name] = true
	}
	return nil
}

func (p *Prompt) check() error {
	if !toolName.MatchString(p.Name) {
		return fmt.Errorf("name must match %s", toolName)
	}
	if err := checkLength("title", p.Title, MaxText); err != nil {
		return err
	}
	if err := checkIcons(p.Icons); err != nil {
		return err
	}
	if err := checkComplete(p.Complete); err != nil {
		return err
	}
	if err := p.Meta.check(); err != nil {
		return err
	}
	if err := p.Meta.checkUIKey("prompt"); err != nil {
		return err
	}
	if err := checkClient(p.Client); err != nil {
		return err
	}
	if len(p.Client) > 0 && len(p.Messages) > 0 {
		return errors.New(`"client" is for a prompt its module gets: one with "messages" runs nothing, and asks nothing`)
	}
	if len(p.Arguments) > MaxPromptArguments {
		return fmt.Errorf("%d arguments, over the limit of %d", len(p.Arguments), MaxPromptArguments)
	}
	declared := make(map[string]bool, len(p.Arguments))
	for i, a := range p.Arguments {
		if !argumentName.MatchString(a.Name) {
			return fmt.Errorf("argument %d: name must match %s", i, argumentName)
		}
		if declared[a.Name] {
			return fmt.Errorf("argument %q is declared twice", a.Name)
		}
		declared[a.Name] = true
		if err := checkLength("title", a.Title, MaxText); err != nil {
			return fmt.Errorf("argument %q: %w", a.Name, err)
		}
		if err := checkCompletions(a.Completions); err != nil {
			return fmt.Errorf("argument %q: %w", a.Name, err)
		}
	}
	if len(p.Messages) > MaxMessages {
		return fmt.Errorf("%d messages, over the limit of %d", len(p.Messages), MaxMessages)
	}
	size := 0
	for i, msg := range p.Messages {
		if msg.Role != "user" && msg.Role != "assistant" {
			return fmt.Errorf(`message %d: "role" must be "user" or "assistant", not %q`, i, msg.Role)
		}
		if msg.Content.Type != "text" {
			return fmt.Errorf(`message %d: a declared message's content is {"type": "text", "text": ...}, not type %q: serve other content from the module`, i, msg.Content.Type)
		}
		for _, m := range placeholder.FindAllStringSubmatch(msg.Content.Text, -1) {
			if !declared[m[1]] {
				return fmt.Errorf("message %d: {{%s}} names no argument of the prompt", i, m[1])
			}
		}
		size += len(msg.Content.Text)
	}
	if size > MaxStatic {
		return fmt.Errorf("the messages' texts are %d bytes, over the %d-byte limit of static contents: serve larger prompts from the module", size, MaxStatic)
	}
	return nil
}

// MaxCompletions bounds the values declared for one argument or variable.
const MaxCompletions = 1000

func checkCompletions(values []string) error {
	if len(values) > MaxCompletions {
		return fmt.Errorf(`"completions" lists %d values, over the limit of %d`, len(values), MaxCompletions)
	}
	for _, v := range values {
		if err := checkLength("completions", v, MaxText); err != nil {
			return err
		}
	}
	return nil
}
