package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	guest "github.com/wasmcp/wasmcp/sdk-guest/go"
)

// The tools that ask the client: by elicitation, sampling and roots on the
// 2025-11-25 session (tools-call-elicitation, tools-call-sampling,
// elicitation-sep1034-defaults, elicitation-sep1330-enums), and through
// InputRequiredResults on 2026-07-28 (input-required-result-*,
// server-stateless). The host does the rest: a tool asks and waits.

// askTools are the tools of this file, in the manifest's order.
func askTools() []guest.Tool {
	return []guest.Tool{
		guest.Text("test_sampling", sampling),
		guest.Text("test_elicitation", elicitation),
		guest.Text("test_elicitation_sep1034_defaults", elicitationDefaults),
		guest.Text("test_elicitation_sep1330_enums", elicitationEnums),
		guest.Text("test_missing_capability", missingCapability),
		guest.Text("test_input_required_result_elicitation", inputElicitation),
		guest.Text("test_input_required_result_sampling", inputSampling),
		guest.Text("test_input_required_result_list_roots", inputListRoots),
		guest.Text("test_input_required_result_request_state", inputRequestState),
		guest.Text("test_input_required_result_multi_round", inputMultiRound),
		guest.Text("test_input_required_result_tampered_state", inputTamperedState),
		guest.Text("test_input_required_result_capabilities", inputCapabilities),
		guest.Text("test_input_required_result_multiple_inputs", inputMultiple),
		guest.Text("confirm_delete", confirmDelete),
		guest.Text("multi_input", multiInput),
		guest.Text("test_tool_with_task", toolWithTask),
	}
}

// object is a JSON Schema object of the properties given, all required
// unless optional.
func object(properties map[string]any, required ...string) map[string]any {
	s := map[string]any{"type": "object", "properties": properties}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// described is what a tool says of an elicitation's answer.
func described(r *guest.ElicitResult) string {
	content, err := json.Marshal(r.Content)
	if err != nil {
		content = []byte("{}")
	}
	return fmt.Sprintf("action=%s, content=%s", r.Action, content)
}

type promptArgs struct {
	Prompt string `json:"prompt"`
}

func sampling(in promptArgs) (string, error) {
	r, err := guest.CreateMessage(guest.SamplingRequest{Messages: []guest.SamplingMessage{guest.TextMessage("user", in.Prompt)}, MaxTokens: 100})
	if err != nil {
		return "", err
	}
	return "LLM response: " + r.Text(), nil
}

type messageArgs struct {
	Message string `json:"message"`
}

func elicitation(in messageArgs) (string, error) {
	r, err := guest.Elicit(guest.Elicitation{Message: in.Message, Schema: object(map[string]any{
		"username": map[string]any{"type": "string", "description": "User's response"},
		"email":    map[string]any{"type": "string", "description": "User's email address"},
	}, "username", "email")})
	if err != nil {
		return "", err
	}
	return "User response: " + described(r), nil
}

func elicitationDefaults(none) (string, error) {
	r, err := guest.Elicit(guest.Elicitation{Message: "Please review and update the form fields with defaults", Schema: object(map[string]any{
		"name":     map[string]any{"type": "string", "description": "User name", "default": "John Doe"},
		"age":      map[string]any{"type": "integer", "description": "User age", "default": 30},
		"score":    map[string]any{"type": "number", "description": "User score", "default": 95.5},
		"status":   map[string]any{"type": "string", "description": "User status", "enum": []string{"active", "inactive", "pending"}, "default": "active"},
		"verified": map[string]any{"type": "boolean", "description": "Verification status", "default": true},
	})})
	if err != nil {
		return "", err
	}
	return "Elicitation completed: " + described(r), nil
}

func elicitationEnums(none) (string, error) {
	options := func(key string, pairs ...string) []map[string]any {
		var out []map[string]any
		for i := 0; i < len(pairs); i += 2 {
			out = append(out, map[string]any{"const": pairs[i], key: pairs[i+1]})
		}
		return out
	}
	r, err := guest.Elicit(guest.Elicitation{Message: "Please select options from the enum fields", Schema: object(map[string]any{
		"untitledSingle": map[string]any{"type": "string", "description": "Select one option", "enum": []string{"option1", "option2", "option3"}},
		"titledSingle": map[string]any{"type": "string", "description": "Select one option with titles",
			"oneOf": options("title", "value1", "First Option", "value2", "Second Option", "value3", "Third Option")},
		"legacyEnum": map[string]any{"type": "string", "description": "Select one option (legacy)",
			"enum": []string{"opt1", "opt2", "opt3"}, "enumNames": []string{"Option One", "Option Two", "Option Three"}},
		"untitledMulti": map[string]any{"type": "array", "description": "Select multiple options",
			"items": map[string]any{"type": "string", "enum": []string{"option1", "option2", "option3"}}},
		"titledMulti": map[string]any{"type": "array", "description": "Select multiple options with titles",
			"items": map[string]any{"anyOf": options("title", "value1", "First Choice", "value2", "Second Choice", "value3", "Third Choice")}},
	})})
	if err != nil {
		return "", err
	}
	return "Elicitation completed: " + described(r), nil
}

// missingCapability needs sampling; a client that did not declare it is
// refused before the tool runs (-32021 on 2026-07-28).
func missingCapability(none) (string, error) {
	r, err := guest.CreateMessage(guest.SamplingRequest{Messages: []guest.SamplingMessage{guest.TextMessage("user", "Say hello")}, MaxTokens: 20})
	if err != nil {
		return "", err
	}
	return "Sampled: " + r.Text(), nil
}

// askName asks for a name under id, with message.
func askName(id, message string) (string, error) {
	r, err := guest.Elicit(guest.Elicitation{ID: id, Message: message, Schema: object(map[string]any{"name": map[string]any{"type": "string"}}, "name")})
	if err != nil {
		return "", err
	}
	name, _ := r.Content["name"].(string)
	if r.Action != guest.Accept || name == "" {
		return "", fmt.Errorf("no name given (%s)", r.Action)
	}
	return name, nil
}

func inputElicitation(none) (string, error) {
	name, err := askName("user_name", "What is your name?")
	if err != nil {
		return "", err
	}
	return "Hello, " + name + "!", nil
}

func inputSampling(none) (string, error) {
	r, err := guest.CreateMessage(guest.SamplingRequest{ID: "capital_question",
		Messages: []guest.SamplingMessage{guest.TextMessage("user", "What is the capital of France?")}, MaxTokens: 100})
	if err != nil {
		return "", err
	}
	return "The model says: " + r.Text(), nil
}

func inputListRoots(none) (string, error) {
	roots, err := guest.ListRoots("client_roots")
	if err != nil {
		return "", err
	}
	uris := make([]string, len(roots))
	for i, r := range roots {
		uris[i] = r.URI
	}
	return fmt.Sprintf("The client has %d roots: %s", len(roots), strings.Join(uris, ", ")), nil
}

// confirm asks the suite's yes-or-no question under the id "confirm".
func confirm() error {
	r, err := guest.Elicit(guest.Elicitation{ID: "confirm", Message: "Please confirm", Schema: object(map[string]any{"ok": map[string]any{"type": "boolean"}}, "ok")})
	if err != nil {
		return err
	}
	if ok, _ := r.Content["ok"].(bool); r.Action != guest.Accept || !ok {
		return fmt.Errorf("not confirmed (%s)", r.Action)
	}
	return nil
}

// inputRequestState is answered on a retry whose requestState the server
// checked: the answer reaches the tool only then.
func inputRequestState(none) (string, error) {
	if err := confirm(); err != nil {
		return "", err
	}
	return "Confirmed: state-ok (the server checked the requestState it issued)", nil
}

func inputTamperedState(none) (string, error) {
	if err := confirm(); err != nil {
		return "", err
	}
	return "Confirmed", nil
}

func inputMultiRound(none) (string, error) {
	name, err := askName("step1", "Step 1: What is your name?")
	if err != nil {
		return "", err
	}
	r, err := guest.Elicit(guest.Elicitation{ID: "step2", Message: "Step 2: What is your favorite color?", Schema: object(map[string]any{"color": map[string]any{"type": "string"}}, "color")})
	if err != nil {
		return "", err
	}
	color, _ := r.Content["color"].(string)
	return fmt.Sprintf("%s likes %s", name, color), nil
}

// inputCapabilities asks by elicitation where the client takes it, and
// samples where it does not: the host refuses an ask the client did not
// declare (code 7), and the tool goes on to the next.
func inputCapabilities(none) (string, error) {
	name, err := askName("user_name", "What is your name?")
	var ae *guest.AskError
	if errors.As(err, &ae) && ae.Code == guest.ErrDenied {
		r, err := guest.CreateMessage(guest.SamplingRequest{ID: "greeting", Messages: []guest.SamplingMessage{guest.TextMessage("user", "Generate a greeting")}, MaxTokens: 50})
		if err != nil {
			return "", err
		}
		return r.Text(), nil
	}
	if err != nil {
		return "", err
	}
	return "Hello, " + name + "!", nil
}

// inputMultiple asks three things at once: on 2026-07-28 they go to the
// client in one InputRequiredResult.
func inputMultiple(none) (string, error) {
	got, err := guest.AskAll(
		guest.Elicitation{ID: "user_name", Message: "What is your name?", Schema: object(map[string]any{"name": map[string]any{"type": "string"}}, "name")},
		guest.SamplingRequest{ID: "greeting", Messages: []guest.SamplingMessage{guest.TextMessage("user", "Generate a greeting")}, MaxTokens: 50},
		guest.RootsRequest{ID: "client_roots"},
	)
	if err != nil {
		return "", err
	}
	var name guest.ElicitResult
	var greeting guest.SamplingResult
	var roots struct{ Roots []guest.Root }
	for id, v := range map[string]any{"user_name": &name, "greeting": &greeting, "client_roots": &roots} {
		if err := got[id].Decode(v); err != nil {
			return "", fmt.Errorf("%s: %w", id, err)
		}
	}
	return fmt.Sprintf("%s, %v (%d roots)", greeting.Text(), name.Content["name"], len(roots.Roots)), nil
}

// The tasks extension's fixtures that ask (tasks-mrtr-input): each may run
// as a task, which is input_required while it waits for the answers.

type deleteArgs struct {
	Filename string `json:"filename"`
}

// confirmDelete asks for a confirmation, then says what it would do.
func confirmDelete(a deleteArgs) (string, error) {
	r, err := guest.Elicit(guest.Elicitation{ID: "confirm", Message: "Delete " + a.Filename + "?",
		Schema: object(map[string]any{"confirm": map[string]any{"type": "boolean"}}, "confirm")})
	if err != nil {
		return "", err
	}
	if r.Action != "accept" || r.Content["confirm"] != true {
		return "Kept " + a.Filename, nil
	}
	return "Deleted " + a.Filename, nil
}

// multiInput asks for a name and a confirmation at once, so that both
// are pending together.
func multiInput(none) (string, error) {
	schema := object(map[string]any{"name": map[string]any{"type": "string"}, "confirm": map[string]any{"type": "boolean"}})
	got, err := guest.AskAll(
		guest.Elicitation{ID: "name", Message: "What is your name?", Schema: schema},
		guest.Elicitation{ID: "confirm", Message: "Go on?", Schema: schema},
	)
	if err != nil {
		return "", err
	}
	var parts []string
	for _, id := range []string{"name", "confirm"} {
		var r guest.ElicitResult
		if err := got[id].Decode(&r); err != nil {
			return "", fmt.Errorf("%s: %w", id, err)
		}
		parts = append(parts, id+": "+described(&r))
	}
	return strings.Join(parts, "; "), nil
}

// toolWithTask asks the user's name, then greets it
// (tasks-mrtr-composition). Its manifest's execution.askFirst has the
// server ask by plain input-required rounds and make the call a task only
// on the round that has the answer.
func toolWithTask(none) (string, error) {
	r, err := guest.Elicit(guest.Elicitation{ID: "user_name", Message: "What is your name?",
		Schema: object(map[string]any{"name": map[string]any{"type": "string"}}, "name")})
	if err != nil {
		return "", err
	}
	if r.Action != "accept" {
		return "No name given (" + r.Action + ")", nil
	}
	return fmt.Sprintf("Hello, %v!", r.Content["name"]), nil
}

// inputPrompt gets the prompt test_input_required_result_prompt once the
// client said what context it should use.
func inputPrompt() (*guest.PromptResult, error) {
	r, err := guest.Elicit(guest.Elicitation{ID: "user_context", Message: "What context should the prompt use?",
		Schema: object(map[string]any{"context": map[string]any{"type": "string"}}, "context")})
	if err != nil {
		return nil, err
	}
	context, _ := r.Content["context"].(string)
	return &guest.PromptResult{Messages: []guest.PromptMessage{{Role: "user", Content: guest.TextContent("Use this context: " + context)}}}, nil
}
