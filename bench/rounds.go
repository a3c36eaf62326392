package main

import (
	"fmt"
	"slices"
)

// Rounds: every server runs once per round, the servers taking turns and
// their order turning with each round, so that a change in the machine's
// load during a run falls on all of them rather than on whichever ran
// then. Each figure reported is the median of its rounds; the peaks and
// the noise are the worst round's.

// inTurn is the order of sel in round (counting from 0): turned by one
// place a round.
func inTurn[T any](sel []T, round int) []T {
	if len(sel) == 0 {
		return nil
	}
	k := round % len(sel)
	return append(slices.Clone(sel[k:]), sel[:k]...)
}

// combine is one server and transport's rounds as one result: medians of
// the figures, sums of the counts, the highest peak memory and noise. A
// round that failed fails the whole.
func combine(runs []result) result {
	for i, r := range runs {
		if r.Failed != "" {
			r.Failed = fmt.Sprintf("round %d: %s", i+1, r.Failed)
			return r
		}
	}
	out := runs[0]
	out.Rounds = len(runs)
	out.RoundP50Ms = nil
	for _, r := range runs {
		out.RoundP50Ms = append(out.RoundP50Ms, r.Latency.P50Ms)
	}
	out.FirstCallMs = medianOf(runs, func(r result) float64 { return r.FirstCallMs })
	out.Latency = combineLatency(runs, func(r result) latency { return r.Latency })
	out.CPUMsPerCall = medianOf(runs, func(r result) float64 { return r.CPUMsPerCall })
	out.AllocKiBPerCall = medianOf(runs, func(r result) float64 { return r.AllocKiBPerCall })
	out.Errors, out.ErrorSamples = 0, nil
	for _, r := range runs {
		out.Errors += r.Errors
		out.ErrorSamples = append(out.ErrorSamples, r.ErrorSamples...)
		out.PeakRSSMiB = max(out.PeakRSSMiB, r.PeakRSSMiB)
		out.EndRSSMiB = max(out.EndRSSMiB, r.EndRSSMiB)
		out.OtherCPUPercent = max(out.OtherCPUPercent, r.OtherCPUPercent)
		out.StealPercent = max(out.StealPercent, r.StealPercent)
	}
	out.ErrorSamples = out.ErrorSamples[:min(len(out.ErrorSamples), 5)]
	out.Throughput = nil
	for i, p := range runs[0].Throughput {
		// Every round runs the same levels in the same order.
		at := func(r result) point { return r.Throughput[i] }
		p.Seconds, p.Calls, p.Errors = 0, 0, 0
		for _, r := range runs {
			p.Seconds += at(r).Seconds
			p.Calls += at(r).Calls
			p.Errors += at(r).Errors
		}
		p.CallsPerSec = medianOf(runs, func(r result) float64 { return at(r).CallsPerSec })
		p.CPUMsPerCall = medianOf(runs, func(r result) float64 { return at(r).CPUMsPerCall })
		p.Latency = combineLatency(runs, func(r result) latency { return at(r).Latency })
		out.Throughput = append(out.Throughput, p)
	}
	return out
}

// combineLatency is the median of each of the rounds' percentiles (and
// their extremes), over all their calls.
func combineLatency(runs []result, of func(result) latency) latency {
	l := latency{
		MeanMs: medianOf(runs, func(r result) float64 { return of(r).MeanMs }),
		MinMs:  medianOf(runs, func(r result) float64 { return of(r).MinMs }),
		P50Ms:  medianOf(runs, func(r result) float64 { return of(r).P50Ms }),
		P90Ms:  medianOf(runs, func(r result) float64 { return of(r).P90Ms }),
		P99Ms:  medianOf(runs, func(r result) float64 { return of(r).P99Ms }),
		MaxMs:  medianOf(runs, func(r result) float64 { return of(r).MaxMs }),
	}
	for _, r := range runs {
		l.Calls += of(r).Calls
	}
	return l
}

// medianOf is the median of f over runs: the middle value, or the mean of
// the middle two.
func medianOf(runs []result, f func(result) float64) float64 {
	v := make([]float64, len(runs))
	for i, r := range runs {
		v[i] = f(r)
	}
	slices.Sort(v)
	n := len(v)
	if n == 0 {
		return 0
	}
	if n%2 == 1 {
		return v[n/2]
	}
	return (v[n/2-1] + v[n/2]) / 2
}
