// Command admission-load offers dry-run pod CREATEs to a kube-apiserver at a steady open-loop rate, so that every
// one goes through the mutating webhooks while nothing is stored, and prints one JSON document of what it measured.
//
// It is the load generator of tests/load/test_scale.py (through tests/e2e/load.py's GoAdmissionLoad): a Python
// generator shares the GIL and the cores with the test and could not offer 200/s. Requests are scheduled by a
// ticker, one slot every 1/rate seconds; a slot that could not start on time (more than -slack overdue when a
// delayed tick came, or -concurrency requests were already in flight) is counted as late and skipped, never sent
// in a burst to catch up. It runs for -duration, or until -limit requests were sent, or until SIGTERM/SIGINT (or,
// with -stop-on-stdin-eof, until its stdin ends), then waits for the requests in flight. An answer that is not 201
// is a failure; so is a connection error (status 0).
//
// While it runs, a progress line {"sent":N,"failed":N,"late":N} goes to stderr every -progress.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"sort"
	"sync"
	"syscall"
	"time"
)

const (
	modeLabel      = "ballast.tightlinesoftware.com/mode"
	keptFailures   = 20
	messageBytes   = 300
	defaultTimeout = 30 * time.Second
)

type options struct {
	server      string
	namespace   string
	caFile      string
	certFile    string
	keyFile     string
	rate        float64
	duration    time.Duration
	limit       int
	concurrency int
	timeout     time.Duration
	progress    time.Duration
	slack       time.Duration
	stdinStop   bool
}

// Failure is one answer that was not 201 (status 0: the request never got an answer).
type Failure struct {
	Status  int    `json:"status"`
	Message string `json:"message"`
}

// Latencies are milliseconds over every request sent, failures included.
type Latencies struct {
	P50 float64 `json:"p50"`
	P90 float64 `json:"p90"`
	P99 float64 `json:"p99"`
	Max float64 `json:"max"`
}

// Result is the JSON document printed at the end.
type Result struct {
	Sent           int       `json:"sent"`
	Failed         int       `json:"failed"`
	Failures       []Failure `json:"failures"`
	LatenciesMs    Latencies `json:"latencies_ms"`
	ElapsedSeconds float64   `json:"elapsed_seconds"`
	RatePerSecond  float64   `json:"rate_per_second"`
	OfferedRate    float64   `json:"offered_rate"`
	SlackMs        float64   `json:"slack_ms"`
	Late           int       `json:"late"`
	Concurrency    int       `json:"concurrency"`
	MaxInFlight    int       `json:"max_in_flight"`
	Protocol       string    `json:"protocol"`
}

type recorder struct {
	mu          sync.Mutex
	sent        int
	failed      int
	late        int
	failures    []Failure
	latencies   []time.Duration
	inFlight    int
	maxInFlight int
	protocol    string
}

func (r *recorder) started() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.sent++
	r.inFlight++
	if r.inFlight > r.maxInFlight {
		r.maxInFlight = r.inFlight
	}
}

func (r *recorder) finished(took time.Duration, status int, message, protocol string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.inFlight--
	r.latencies = append(r.latencies, took)
	if protocol != "" && r.protocol == "" {
		r.protocol = protocol
	}
	if status != http.StatusCreated {
		r.failed++
		if len(r.failures) < keptFailures {
			r.failures = append(r.failures, Failure{Status: status, Message: message})
		}
	}
}

func (r *recorder) missed(n int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.late += n
}

func (r *recorder) sentCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent
}

func (r *recorder) counts() (sent, failed, late int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.sent, r.failed, r.late
}

// percentile is the same pick as tests/e2e/load.py's AdmissionLoad.p99: ordered[int(q * (n - 1))].
func percentile(ordered []time.Duration, q float64) float64 {
	if len(ordered) == 0 {
		return 0
	}
	return milliseconds(ordered[int(q*float64(len(ordered)-1))])
}

func milliseconds(d time.Duration) float64 {
	return float64(d.Microseconds()) / 1e3
}

func (r *recorder) result(o options, elapsed time.Duration) Result {
	r.mu.Lock()
	defer r.mu.Unlock()
	ordered := append([]time.Duration(nil), r.latencies...)
	sort.Slice(ordered, func(i, j int) bool { return ordered[i] < ordered[j] })
	latencies := Latencies{
		P50: percentile(ordered, 0.50), P90: percentile(ordered, 0.90), P99: percentile(ordered, 0.99),
	}
	if len(ordered) > 0 {
		latencies.Max = milliseconds(ordered[len(ordered)-1])
	}
	rate := 0.0
	if elapsed > 0 {
		rate = float64(r.sent) / elapsed.Seconds()
	}
	failures := r.failures
	if failures == nil {
		failures = []Failure{}
	}
	return Result{
		Sent: r.sent, Failed: r.failed, Failures: failures, LatenciesMs: latencies,
		ElapsedSeconds: round(elapsed.Seconds(), 3), RatePerSecond: round(rate, 2), OfferedRate: o.rate,
		SlackMs: milliseconds(o.slack), Late: r.late, Concurrency: o.concurrency, MaxInFlight: r.maxInFlight,
		Protocol: r.protocol,
	}
}

func round(v float64, digits int) float64 {
	scale := 1.0
	for range digits {
		scale *= 10
	}
	return float64(int64(v*scale+0.5)) / scale
}

// podBody is tests/e2e/load.py's AdmissionLoad._body: an enrolled pod of one container asking 100m and 64Mi.
func podBody(namespace string) ([]byte, error) {
	pod := map[string]any{
		"apiVersion": "v1",
		"kind":       "Pod",
		"metadata": map[string]any{
			"generateName": "load-",
			"namespace":    namespace,
			"labels": map[string]string{
				"app.kubernetes.io/name": "load", "app.kubernetes.io/component": "api", modeLabel: "apply",
			},
		},
		"spec": map[string]any{
			"containers": []any{map[string]any{
				"name":      "app",
				"image":     "registry.k8s.io/pause:3.10",
				"resources": map[string]any{"requests": map[string]string{"cpu": "100m", "memory": "64Mi"}},
			}},
		},
	}
	return json.Marshal(pod)
}

func newClient(o options) (*http.Client, error) {
	ca, err := os.ReadFile(o.caFile)
	if err != nil {
		return nil, err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		return nil, fmt.Errorf("no certificate in %s", o.caFile)
	}
	pair, err := tls.LoadX509KeyPair(o.certFile, o.keyFile)
	if err != nil {
		return nil, err
	}
	transport := &http.Transport{
		TLSClientConfig:     &tls.Config{RootCAs: roots, Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12},
		ForceAttemptHTTP2:   true, // a custom TLS config turns HTTP/2 off unless asked for
		MaxIdleConnsPerHost: o.concurrency,
		IdleConnTimeout:     90 * time.Second,
		TLSHandshakeTimeout: 10 * time.Second,
	}
	return &http.Client{Transport: transport, Timeout: o.timeout}, nil
}

func send(ctx context.Context, client *http.Client, target string, body []byte, r *recorder) {
	began := time.Now()
	status, message, protocol := 0, "", ""
	request, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
	if err == nil {
		request.Header.Set("Content-Type", "application/json")
		request.Header.Set("Accept", "application/json")
		var answer *http.Response
		answer, err = client.Do(request)
		if err == nil {
			protocol = answer.Proto
			status = answer.StatusCode
			if status != http.StatusCreated {
				head, _ := io.ReadAll(io.LimitReader(answer.Body, messageBytes))
				message = string(head)
			}
			_, _ = io.Copy(io.Discard, answer.Body)
			_ = answer.Body.Close()
		}
	}
	if err != nil {
		status, message = 0, err.Error()
	}
	r.finished(time.Since(began), status, message, protocol)
}

// run offers the load and returns when it is over and every request in flight has finished.
func run(ctx context.Context, o options, client *http.Client, target string, body []byte, r *recorder) time.Duration {
	interval := time.Duration(float64(time.Second) / o.rate)
	// Requests are not cancelled by a stop: only scheduling stops, and the ones in flight are waited for.
	requests := context.WithoutCancel(ctx)
	slots := make(chan struct{}, o.concurrency)
	var wg sync.WaitGroup
	start := time.Now()
	ticker := time.NewTicker(interval) // created after start, so tick k fires no earlier than start + k*interval
	defer ticker.Stop()
	last := int64(math.MaxInt64) // the last slot; -duration offers duration/interval of them
	if o.duration > 0 {
		last = int64(o.duration / interval)
	}
	// A slot is on time while it is less than the slack (at least one interval) overdue: a tick delayed by a busy
	// machine may still start the few slots it covers; older ones are late, never sent in a burst to catch up.
	slack := max(o.slack, interval)
	next := int64(1) // the first slot neither started nor counted late
	for next <= last && (o.limit == 0 || r.sentCount() < o.limit) {
		select {
		case <-ctx.Done():
			wg.Wait()
			return time.Since(start)
		case <-ticker.C:
		}
		now := time.Since(start)
		due := min(int64(now/interval), last) // slots next..due are due by now
		for ; next <= due && (o.limit == 0 || r.sentCount() < o.limit); next++ {
			if now-time.Duration(next)*interval >= slack {
				r.missed(1)
				continue
			}
			select {
			case slots <- struct{}{}:
			default: // -concurrency requests already in flight
				r.missed(1)
				continue
			}
			r.started()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				send(requests, client, target, body, r)
			}()
		}
	}
	wg.Wait()
	return time.Since(start)
}

func parse(args []string) (options, error) {
	o := options{}
	flags := flag.NewFlagSet("admission-load", flag.ContinueOnError)
	flags.StringVar(&o.server, "server", "", "the API server's URL, https://host:port")
	flags.StringVar(&o.namespace, "namespace", "default", "the namespace of the pods")
	flags.StringVar(&o.caFile, "ca", "", "the CA bundle (PEM) that signed the API server's certificate")
	flags.StringVar(&o.certFile, "cert", "", "the client certificate (PEM)")
	flags.StringVar(&o.keyFile, "key", "", "the client certificate's key (PEM)")
	flags.Float64Var(&o.rate, "rate", 200, "requests offered per second")
	flags.DurationVar(&o.duration, "duration", 0, "how long to offer load (0: until -limit or a signal)")
	flags.IntVar(&o.limit, "limit", 0, "stop after this many requests sent (0: no limit)")
	flags.DurationVar(&o.slack, "slack", 20*time.Millisecond,
		"how overdue a slot may start (at least one interval); an older one is late, not sent")
	flags.IntVar(&o.concurrency, "concurrency", 64, "the most requests in flight at once")
	flags.DurationVar(&o.timeout, "timeout", defaultTimeout, "each request's timeout")
	flags.DurationVar(&o.progress, "progress", time.Second, "how often a progress line goes to stderr (0: never)")
	flags.BoolVar(&o.stdinStop, "stop-on-stdin-eof", false,
		"stop as on SIGTERM when stdin ends (its parent closed it, or died)")
	if err := flags.Parse(args); err != nil {
		return o, err
	}
	switch {
	case flags.NArg() > 0:
		return o, fmt.Errorf("unexpected arguments: %v", flags.Args())
	case o.server == "" || o.caFile == "" || o.certFile == "" || o.keyFile == "":
		return o, errors.New("-server, -ca, -cert and -key are required")
	case o.rate <= 0 || o.rate > 1e6:
		return o, fmt.Errorf("-rate %v: must be in (0, 1e6]", o.rate)
	case o.concurrency < 1:
		return o, fmt.Errorf("-concurrency %d: must be at least 1", o.concurrency)
	case o.limit < 0 || o.duration < 0 || o.slack < 0:
		return o, errors.New("-limit, -duration and -slack must not be negative")
	}
	return o, nil
}

func main() {
	o, err := parse(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, "admission-load:", err)
		os.Exit(2)
	}
	client, err := newClient(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "admission-load:", err)
		os.Exit(1)
	}
	body, err := podBody(o.namespace)
	if err != nil {
		fmt.Fprintln(os.Stderr, "admission-load:", err)
		os.Exit(1)
	}
	target := fmt.Sprintf("%s/api/v1/namespaces/%s/pods?dryRun=All", o.server, url.PathEscape(o.namespace))
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if o.stdinStop {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			stop()
		}()
	}

	r := &recorder{}
	done := make(chan struct{})
	if o.progress > 0 {
		go func() {
			ticker := time.NewTicker(o.progress)
			defer ticker.Stop()
			for {
				select {
				case <-done:
					return
				case <-ticker.C:
					sent, failed, late := r.counts()
					fmt.Fprintf(os.Stderr, "{\"sent\":%d,\"failed\":%d,\"late\":%d}\n", sent, failed, late)
				}
			}
		}()
	}
	elapsed := run(ctx, o, client, target, body, r)
	close(done)
	out, err := json.Marshal(r.result(o, elapsed))
	if err != nil {
		fmt.Fprintln(os.Stderr, "admission-load:", err)
		os.Exit(1)
	}
	fmt.Println(string(out))
}
