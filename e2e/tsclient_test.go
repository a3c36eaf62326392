package e2e

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

// tsSeen is what e2e/node/client.mjs reports.
type tsSeen struct {
	Tools, Resources, Templates, Prompts []string
	Calculate                            string
	DivideByZero                         tsCall
	About, Invoice, Chase                string
	Review                               []string
	CompleteDeclared                     tsCompletion
	CompleteModule                       tsCompletion
}

// tsCall is what client.mjs reports of a tools/call.
type tsCall struct {
	IsError bool
	Text    string
}

type tsCompletion struct {
	Values []string
	Total  int
}

// TestTypeScriptClient drives the examples with the official TypeScript
// SDK's client, another implementation than the Go SDK the other tests
// use, over stdio and Streamable HTTP on both revisions: tools, resources,
// templates, prompts and completions, declared and from a module.
func TestTypeScriptClient(t *testing.T) {
	writeHostile(t)
	forEachTSTarget(t, toolsDir, versions, func(t *testing.T, version string, args []string) {
		var seen tsSeen
		runTSClient(t, "examples", version, args, &seen)
		for _, want := range []string{"calculate", "search_invoices", "loan_payment"} {
			if !slices.Contains(seen.Tools, want) {
				t.Errorf("tools/list lacks %s: %v", want, seen.Tools)
			}
		}
		if seen.Calculate != "15.0" || !seen.DivideByZero.IsError || !strings.Contains(seen.DivideByZero.Text, "zero") {
			t.Errorf("calls: %q, %+v", seen.Calculate, seen.DivideByZero)
		}
		if !slices.Contains(seen.Resources, "invoices://about") || !slices.Contains(seen.Templates, "invoices://{id}") ||
			!strings.Contains(seen.About, "invoice") || seen.Invoice != "INV-2026-007" {
			t.Errorf("resources %v, templates %v, about %q, invoice %q", seen.Resources, seen.Templates, seen.About, seen.Invoice)
		}
		if !slices.Contains(seen.Prompts, "chase_invoice") || !strings.Contains(seen.Chase, "INV-2026-007") ||
			!strings.Contains(seen.Chase, "firm") || !slices.Equal(seen.Review, []string{"resource", "text"}) {
			t.Errorf("prompts %v, chase %q, review %v", seen.Prompts, seen.Chase, seen.Review)
		}
		if !slices.Equal(seen.CompleteDeclared.Values, []string{"friendly", "firm"}) ||
			len(seen.CompleteModule.Values) != 10 || seen.CompleteModule.Values[0] != "INV-2026-010" || seen.CompleteModule.Total != 10 {
			t.Errorf("completions: declared %+v, from the module %+v", seen.CompleteDeclared, seen.CompleteModule)
		}
	})
}

// forEachTSTarget runs f for each transport to servers of dir, HTTP and
// stdio, on each revision of revs, with client.mjs's arguments for them.
func forEachTSTarget(t *testing.T, dir string, revs []string, f func(t *testing.T, version string, args []string)) {
	t.Helper()
	s := startHTTPIn(t, dir)
	for name, args := range map[string][]string{
		"http":  {"http", s.url},
		"stdio": append([]string{"stdio"}, stdioCommand("--tools", dir).Args...),
	} {
		for _, v := range revs {
			t.Run(name+"/"+v, func(t *testing.T) { f(t, v, args) })
		}
	}
}

// runTSClient runs scenario of e2e/node/client.mjs on revision version
// with the server args name, checks that the SDK speaks that revision,
// and decodes what it prints into seen.
func runTSClient(t *testing.T, scenario, version string, args []string, seen any) {
	t.Helper()
	cmd := nodeCommand(t, "node", append([]string{"client.mjs", scenario, version}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("client.mjs %s %s: %v\n%s", scenario, version, err, stderr.String())
	}
	var spoke struct{ ProtocolVersion string }
	if err := json.Unmarshal(out, seen); err != nil || json.Unmarshal(out, &spoke) != nil {
		t.Fatalf("client.mjs %s %s printed %q: %v", scenario, version, out, err)
	}
	// Only v2 of the SDK, which 2026-07-28 runs on, says what it speaks.
	if (version == "2026-07-28" || spoke.ProtocolVersion != "") && spoke.ProtocolVersion != version {
		t.Fatalf("client.mjs %s %s spoke %q", scenario, version, spoke.ProtocolVersion)
	}
}

// The TypeScript SDK's client answers a tool's asks, over stdio and HTTP
// on both revisions (on 2026-07-28, the input requests of the tool's
// InputRequiredResult, retrying the call with the answers):
// an elicitation and a request for its roots, asked at once (askall), and
// a sampling request (asksample).
func TestTypeScriptClientAnswersAsks(t *testing.T) {
	forEachTSTarget(t, askDir(t), versions, func(t *testing.T, version string, args []string) {
		var seen struct {
			tsCall
			Sample tsCall
			Asked  []string
		}
		runTSClient(t, "ask", version, args, &seen)
		answers, _ := strings.CutPrefix(seen.Text, "02\n")
		var got struct {
			A struct {
				Action  string
				Content map[string]string
			}
			B struct{ Roots []struct{ URI, Name string } }
		}
		if seen.IsError || json.Unmarshal([]byte(answers), &got) != nil || got.A.Action != "accept" || got.A.Content["name"] != "ts" ||
			len(got.B.Roots) != 1 || got.B.Roots[0].URI != "file:///ts" {
			t.Errorf("askall = %q (isError %v); want the client's answers to both asks", seen.Text, seen.IsError)
		}
		codes, answer, _ := strings.Cut(seen.Sample.Text, "\n")
		var sampled struct {
			Role, Model string
			Content     struct{ Type, Text string }
		}
		if seen.Sample.IsError || codes != "002" || json.Unmarshal([]byte(answer), &sampled) != nil ||
			sampled.Role != "assistant" || sampled.Content.Text != "teal" || sampled.Model != "ts-model" {
			t.Errorf("asksample = %q (isError %v); want codes 002 and the client's answer", seen.Sample.Text, seen.Sample.IsError)
		}
		if !slices.Equal(seen.Asked, []string{"elicitation/create: x", "roots/list", "sampling/createMessage: Name a colour. (10 tokens)"}) {
			t.Errorf("the client was asked %q", seen.Asked)
		}
	})
}

// TestTypeScriptClientRunsTasks has the TypeScript SDK's experimental
// tasks API run tools as 2025-11-25 tasks, over stdio and HTTP: it learns
// from tools/list which tools are tasks, follows search_invoices' task to
// its result, and cancels task_spin's.
func TestTypeScriptClientRunsTasks(t *testing.T) {
	forEachTSTarget(t, tasksDir(t), []string{"2025-11-25"}, func(t *testing.T, version string, args []string) {
		type run struct {
			Created struct {
				TaskID, Status string
			}
			Statuses []string
			Result   struct {
				IsError           bool
				StructuredContent struct{ Total float64 }
			}
			Error, Got, Plain, Cancelled string
			Again                        struct{ Total float64 }
			Listed                       bool
		}
		var seen struct {
			TaskSupport map[string]string
			Search      run
			Spin        run
		}
		runTSClient(t, "tasks", version, args, &seen)
		if seen.TaskSupport["search_invoices"] != "optional" || seen.TaskSupport["task_spin"] != "required" {
			t.Errorf("tools/list task support: %v", seen.TaskSupport)
		}
		search := seen.Search
		if search.Created.TaskID == "" || search.Created.Status != "working" || search.Error != "" ||
			len(search.Statuses) == 0 || search.Statuses[len(search.Statuses)-1] != "completed" ||
			search.Result.IsError || search.Result.StructuredContent.Total != 2230.5 {
			t.Errorf("search_invoices as a task: %+v; want it created working, completed, with its total", search)
		}
		if search.Got != "completed" || search.Again.Total != 2230.5 || !search.Listed {
			t.Errorf("search_invoices' task afterwards: tasks/get %q, tasks/result total %v, listed %v", search.Got, search.Again.Total, search.Listed)
		}
		spin := seen.Spin
		if !strings.Contains(spin.Plain, "requires task-based execution") {
			t.Errorf("a plain call of task_spin: %q; want the SDK's refusal", spin.Plain)
		}
		if spin.Created.TaskID == "" || spin.Cancelled != "cancelled" || !slices.Equal(spin.Statuses, []string{"cancelled"}) ||
			!strings.Contains(spin.Error, "Task "+spin.Created.TaskID+" was cancelled") {
			t.Errorf("task_spin cancelled: %+v", spin)
		}
	})
}
