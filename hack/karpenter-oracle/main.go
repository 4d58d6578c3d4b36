// Command karpenter-oracle answers what Karpenter v1.15.0's own exported scoring functions return, so that
// ballast's Python port (ballast.internal.consolidation) can be checked against them case by case
// (tests/unit/internal/consolidation/test_against_karpenter.py).
//
// It reads one JSON case per line on stdin and writes one JSON result per line on stdout, in the same order:
//
//	{"kind":"eviction","annotations":{...},"priority":N,"pod_deletion_cost_management":false}
//	  -> {"cost":<float64 bits>,"cost_text":"1.5","logged_errors":0,"pod_deletion_cost_management":false}
//	{"kind":"score","savings":<bits>,"disruption_cost":<bits>,"total_cost":<bits>,"total_disruption_cost":<bits>,"k":2}
//	  -> {"score":<bits>,"savings_fraction":<bits>,"disruption_fraction":<bits>,"threshold":<bits>,"approved":true,...}
//	{"kind":"budget","schedule":"0 9 * * 1-5","duration":"8h","now_unix":1733212800}
//	  -> {"active":true,"allowed":3,"invalid":""}   (IsActive, GetAllowedDisruptions of nodes "30%" on 10, its error)
//
// Floats travel as their IEEE-754 bit patterns (math.Float64bits, a JSON integer) both ways, so that nothing is
// lost to decimal printing and -0, infinities and NaN pass too; the *_text fields are only for people reading a
// failure. A line that cannot be decoded gets {"error":"..."} and the run goes on.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"strconv"
	"time"

	"github.com/go-logr/logr"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/log"

	karpv1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/controllers/disruption"
	"sigs.k8s.io/karpenter/pkg/operator/options"
	disruptionutils "sigs.k8s.io/karpenter/pkg/utils/disruption"
)

type request struct {
	Kind string `json:"kind"`

	// kind "eviction"
	Annotations               map[string]string `json:"annotations"`
	Priority                  *int32            `json:"priority"`
	PodDeletionCostManagement bool              `json:"pod_deletion_cost_management"`

	// kind "score"
	Savings             uint64 `json:"savings"`
	DisruptionCost      uint64 `json:"disruption_cost"`
	TotalCost           uint64 `json:"total_cost"`
	TotalDisruptionCost uint64 `json:"total_disruption_cost"`
	K                   int32  `json:"k"`

	// kind "budget": schedule and duration as a NodePool holds them (either may be absent), now in Unix seconds
	Schedule *string `json:"schedule"`
	Duration *string `json:"duration"`
	NowUnix  int64   `json:"now_unix"`
}

type budgetResult struct {
	Active  bool   `json:"active"`
	Allowed int    `json:"allowed"`
	Invalid string `json:"invalid"`
}

type evictionResult struct {
	Cost                      uint64 `json:"cost"`
	CostText                  string `json:"cost_text"`
	LoggedErrors              int    `json:"logged_errors"`
	PodDeletionCostManagement bool   `json:"pod_deletion_cost_management"`
}

type scoreResult struct {
	Score              uint64 `json:"score"`
	ScoreText          string `json:"score_text"`
	SavingsFraction    uint64 `json:"savings_fraction"`
	DisruptionFraction uint64 `json:"disruption_fraction"`
	Threshold          uint64 `json:"threshold"`
	Approved           bool   `json:"approved"`
}

type errorResult struct {
	Error string `json:"error"`
}

// errorCounter is a logr sink that only counts Error calls: EvictionCost logs an annotation it cannot parse as
// an error, and the test checks that Python warns on exactly the same pods.
type errorCounter struct{ errors int }

func (s *errorCounter) Init(logr.RuntimeInfo)          {}
func (s *errorCounter) Enabled(int) bool               { return true }
func (s *errorCounter) Info(int, string, ...any)       {}
func (s *errorCounter) Error(error, string, ...any)    { s.errors++ }
func (s *errorCounter) WithValues(...any) logr.LogSink { return s }
func (s *errorCounter) WithName(string) logr.LogSink   { return s }

// karpenterOptions are the options Karpenter's operator would run with given these command-line arguments and no
// environment: its own flag set, parsed by its own Parse (which fills in the default feature gates).
func karpenterOptions(args ...string) (*options.Options, error) {
	opts := &options.Options{}
	fs := &options.FlagSet{FlagSet: flag.NewFlagSet("karpenter", flag.ContinueOnError)}
	opts.AddFlags(fs)
	if err := opts.Parse(fs, args...); err != nil {
		return nil, err
	}
	return opts, nil
}

type oracle struct {
	defaults, gateOn *options.Options
}

func (o *oracle) eviction(req request) evictionResult {
	opts := o.defaults
	if req.PodDeletionCostManagement {
		opts = o.gateOn
	}
	sink := &errorCounter{}
	ctx := log.IntoContext(options.ToContext(context.Background(), opts), logr.New(sink))
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "default", Annotations: req.Annotations},
		Spec:       corev1.PodSpec{Priority: req.Priority},
	}
	cost := disruptionutils.EvictionCost(ctx, pod)
	return evictionResult{
		Cost:                      math.Float64bits(cost),
		CostText:                  strconv.FormatFloat(cost, 'g', -1, 64),
		LoggedErrors:              sink.errors,
		PodDeletionCostManagement: opts.FeatureGates.PodDeletionCostManagement,
	}
}

func (o *oracle) score(req request) scoreResult {
	totals := disruption.NodePoolTotals{
		TotalCost:           math.Float64frombits(req.TotalCost),
		TotalDisruptionCost: math.Float64frombits(req.TotalDisruptionCost),
	}
	result := disruption.ScoreMove(
		math.Float64frombits(req.Savings), math.Float64frombits(req.DisruptionCost), totals, req.K)
	return scoreResult{
		Score:              math.Float64bits(result.Score()),
		ScoreText:          strconv.FormatFloat(result.Score(), 'g', -1, 64),
		SavingsFraction:    math.Float64bits(result.SavingsFraction),
		DisruptionFraction: math.Float64bits(result.DisruptionFraction),
		Threshold:          math.Float64bits(result.Threshold()),
		Approved:           result.Approved(),
	}
}

// budget runs Budget.IsActive and GetAllowedDisruptions (nodes "30%" of 10 nodes) at the given time.
func (o *oracle) budget(req request) any {
	budget := &karpv1.Budget{Nodes: "30%", Schedule: req.Schedule}
	if req.Duration != nil {
		d, err := time.ParseDuration(*req.Duration)
		if err != nil {
			return errorResult{Error: fmt.Sprintf("duration %q: %v", *req.Duration, err)}
		}
		budget.Duration = &metav1.Duration{Duration: d}
	}
	clock := clocktesting.NewFakeClock(time.Unix(req.NowUnix, 0).UTC())
	result := budgetResult{}
	active, err := budget.IsActive(clock)
	result.Active = active
	if err != nil {
		result.Invalid = err.Error()
	}
	result.Allowed, _ = budget.GetAllowedDisruptions(clock, 10)
	return result
}

func (o *oracle) answer(line []byte) any {
	var req request
	decoder := json.NewDecoder(bytes.NewReader(line))
	decoder.DisallowUnknownFields()
	if err := decoder.Decode(&req); err != nil {
		return errorResult{Error: fmt.Sprintf("decoding %q: %v", line, err)}
	}
	switch req.Kind {
	case "eviction":
		return o.eviction(req)
	case "score":
		return o.score(req)
	case "budget":
		return o.budget(req)
	default:
		return errorResult{Error: fmt.Sprintf("kind %q is not eviction, score or budget", req.Kind)}
	}
}

func run() error {
	// Karpenter's options read the environment too; only the feature gates matter to EvictionCost, and the
	// defaults are what is under test, whatever the caller's environment says.
	if err := os.Unsetenv("FEATURE_GATES"); err != nil {
		return err
	}
	defaults, err := karpenterOptions()
	if err != nil {
		return fmt.Errorf("karpenter's default options: %w", err)
	}
	gateOn, err := karpenterOptions("--feature-gates=PodDeletionCostManagement=true")
	if err != nil {
		return fmt.Errorf("karpenter's options with PodDeletionCostManagement: %w", err)
	}
	o := &oracle{defaults: defaults, gateOn: gateOn}

	in := bufio.NewScanner(os.Stdin)
	in.Buffer(make([]byte, 0, 1<<16), 1<<24)
	out := bufio.NewWriter(os.Stdout)
	encoder := json.NewEncoder(out)
	for in.Scan() {
		if err := encoder.Encode(o.answer(in.Bytes())); err != nil {
			return err
		}
	}
	if err := in.Err(); err != nil {
		return err
	}
	return out.Flush()
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "karpenter-oracle:", err)
		os.Exit(1)
	}
}
