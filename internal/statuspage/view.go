package statuspage

import (
	"fmt"
	"html/template"
	"math"
	"slices"
	"time"

	"github.com/wasmcp/wasmcp/abi"
	"github.com/wasmcp/wasmcp/host"
	"github.com/wasmcp/wasmcp/internal/observe"
)

// view is what page.html draws.
type view struct {
	Style   template.CSS
	Status  host.Status
	Tools   []toolView
	Calls   []callView // newest first
	Failed  int        // of Calls, those whose outcome is not ok
	Median  string     // of Calls' durations
	Slowest string
	Latency chart
	Errors  chart
}

type toolView struct {
	host.ToolStatus
	InputSchemaText, OutputSchemaText string // indented
}

type callView struct {
	End, Tool, Outcome, Duration, QueueWait, Memory string
	OK                                              bool
}

// chart is an SVG bar chart of width chartWidth and height chartHeight.
type chart struct {
	Bars   []bar
	Tracks []bar // the full height of each bar's slot, behind it
	Ticks  []tick
}

type bar struct {
	X, Y, W, H float64
	Failed     bool
	Title      string
}

type tick struct {
	Y     float64
	Label string
}

// The charts' geometry, in SVG user units: the plot sits right of the
// y-axis labels and above a margin.
const (
	chartWidth  = 720
	chartHeight = 160
	plotLeft    = 64
	plotTop     = 8
	plotHeight  = chartHeight - plotTop - 16
	plotWidth   = chartWidth - plotLeft - 8
	maxBarWidth = 24
	// errorGroups is how many groups of calls the error-rate chart has
	// at most, each a bar.
	errorGroups = 20
	// fastest is the latency chart's floor, in seconds: below a tenth of
	// a millisecond differences are noise.
	fastest = 1e-4
)

func newView(st host.Status, calls []host.FinishedCall) view {
	v := view{Style: css, Status: st}
	for _, t := range st.Tools {
		tv := toolView{ToolStatus: t, InputSchemaText: indent(t.InputSchema)}
		if len(t.OutputSchema) > 0 {
			tv.OutputSchemaText = indent(t.OutputSchema)
		}
		v.Tools = append(v.Tools, tv)
	}
	durations := make([]time.Duration, len(calls))
	for i, c := range calls {
		durations[i] = c.Duration
		cv := callView{
			End: c.End.Format("15:04:05.000"), Tool: c.Tool, Outcome: c.Outcome, OK: c.Outcome == observe.OK,
			Duration: short(c.Duration), QueueWait: short(c.QueueWait),
		}
		if c.PeakMemory > 0 {
			cv.Memory = abi.Size(c.PeakMemory).String()
		}
		if !cv.OK {
			v.Failed++
		}
		v.Calls = append(v.Calls, cv)
	}
	slices.Reverse(v.Calls)
	if len(durations) > 0 {
		slices.Sort(durations)
		v.Median = short(durations[len(durations)/2])
		v.Slowest = short(durations[len(durations)-1])
	}
	v.Latency = latencyChart(calls)
	v.Errors = errorChart(calls)
	return v
}

// short rounds d to three significant digits, as people compare calls:
// "71.8ms", "1.28s", "3.13µs".
func short(d time.Duration) string {
	if d <= 0 {
		return "0s"
	}
	unit := time.Duration(math.Pow10(max(0, int(math.Floor(math.Log10(float64(d))))-2)))
	return d.Round(unit).String()
}

// slots divides the plot's width among n bars, none wider than
// maxBarWidth.
func slots(n int) float64 { return min(float64(plotWidth)/float64(n), maxBarWidth) }

// latencyChart has a bar for each call, oldest first, its height the
// call's duration on a logarithmic scale: a few slow calls do not flatten
// the rest.
func latencyChart(calls []host.FinishedCall) chart {
	var c chart
	if len(calls) == 0 {
		return c
	}
	slowest := fastest
	for _, call := range calls {
		slowest = max(slowest, call.Duration.Seconds())
	}
	// The top is the first decade above the slowest call, at least 10 ms.
	decades := max(2, math.Ceil(math.Log10(slowest/fastest)))
	scale := func(seconds float64) float64 {
		return plotHeight * max(0, math.Log10(max(seconds, fastest)/fastest)) / decades
	}
	for d := 0; d <= int(decades); d++ {
		s := fastest * math.Pow(10, float64(d))
		c.Ticks = append(c.Ticks, tick{Y: plotTop + plotHeight - scale(s), Label: seconds(s)})
	}
	w := slots(len(calls))
	for i, call := range calls {
		h := max(1, scale(call.Duration.Seconds()))
		c.Bars = append(c.Bars, bar{
			X: plotLeft + float64(i)*w, Y: plotTop + plotHeight - h, W: max(1, w-1), H: h,
			Failed: call.Outcome != observe.OK,
			Title:  fmt.Sprintf("%s %s: %s", call.Tool, call.Outcome, short(call.Duration)),
		})
	}
	return c
}

// seconds labels a tick of the latency chart.
func seconds(s float64) string {
	if s < 1 {
		return fmt.Sprintf("%.4g ms", s*1000)
	}
	return fmt.Sprintf("%.4g s", s)
}

// errorChart divides the calls, oldest first, into at most errorGroups
// groups of the same size, and has a bar for each: the share of its calls
// that failed, over a track of its full height.
func errorChart(calls []host.FinishedCall) chart {
	var c chart
	if len(calls) == 0 {
		return c
	}
	for _, share := range []float64{0, 0.5, 1} {
		c.Ticks = append(c.Ticks, tick{Y: plotTop + plotHeight*(1-share), Label: fmt.Sprintf("%.0f%%", share*100)})
	}
	size := (len(calls) + errorGroups - 1) / errorGroups
	groups := (len(calls) + size - 1) / size
	w := slots(groups)
	for g := range groups {
		group := calls[g*size : min((g+1)*size, len(calls))]
		failed := 0
		for _, call := range group {
			if call.Outcome != observe.OK {
				failed++
			}
		}
		x := plotLeft + float64(g)*w
		c.Tracks = append(c.Tracks, bar{X: x, Y: plotTop, W: max(1, w-1), H: plotHeight})
		h := plotHeight * float64(failed) / float64(len(group))
		first := g*size + 1
		c.Bars = append(c.Bars, bar{
			X: x, Y: plotTop + plotHeight - h, W: max(1, w-1), H: h, Failed: true,
			Title: fmt.Sprintf("calls %d to %d: %d of %d failed", first, first+len(group)-1, failed, len(group)),
		})
	}
	return c
}

// Width, Height and Left give page.html the chart's geometry.
func (chart) Width() int  { return chartWidth }
func (chart) Height() int { return chartHeight }
func (chart) Left() int   { return plotLeft }
