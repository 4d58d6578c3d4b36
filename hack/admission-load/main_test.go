package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

func TestPercentileIsThePythonPick(t *testing.T) {
	ordered := make([]time.Duration, 101)
	for i := range ordered {
		ordered[i] = time.Duration(i) * time.Millisecond
	}
	for q, want := range map[float64]float64{0.5: 50, 0.9: 90, 0.99: 99} {
		if got := percentile(ordered, q); got != want {
			t.Errorf("percentile(0..100 ms, %v) = %v, want %v", q, got, want)
		}
	}
	if got := percentile(nil, 0.99); got != 0 {
		t.Errorf("percentile(nothing) = %v, want 0", got)
	}
}

func TestThePodIsEnrolled(t *testing.T) {
	body, err := podBody("ns")
	if err != nil {
		t.Fatal(err)
	}
	var pod struct {
		Metadata struct {
			GenerateName string            `json:"generateName"`
			Namespace    string            `json:"namespace"`
			Labels       map[string]string `json:"labels"`
		} `json:"metadata"`
	}
	if err := json.Unmarshal(body, &pod); err != nil {
		t.Fatal(err)
	}
	m := pod.Metadata
	if m.GenerateName != "load-" || m.Namespace != "ns" || m.Labels[modeLabel] != "apply" {
		t.Errorf("pod metadata %+v", m)
	}
}

// writePEM writes the test server's certificate as the CA and, as the client pair, the same certificate and key.
func writePEM(t *testing.T, server *httptest.Server) (ca string) {
	t.Helper()
	ca = filepath.Join(t.TempDir(), "ca.crt")
	cert := server.Certificate()
	if err := os.WriteFile(ca, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return ca
}

func TestALoadOf200PerSecondOverHTTP2WithClientCertificates(t *testing.T) {
	var calls, withCertificate atomic.Int64
	server := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.TLS != nil && len(r.TLS.PeerCertificates) == 1 {
			withCertificate.Add(1)
		}
		_, _ = io.Copy(io.Discard, r.Body)
		if r.URL.Query().Get("dryRun") != "All" || r.Method != http.MethodPost {
			http.Error(w, "not a dry-run create", http.StatusBadRequest)
			return
		}
		w.WriteHeader(http.StatusCreated)
	}))
	server.EnableHTTP2 = true
	server.TLS = &tls.Config{ClientAuth: tls.RequireAnyClientCert, MinVersion: tls.VersionTLS12}
	server.StartTLS()
	defer server.Close()
	ca := writePEM(t, server)
	pair := server.TLS.Certificates[0]
	key, err := x509.MarshalPKCS8PrivateKey(pair.PrivateKey)
	if err != nil {
		t.Fatal(err)
	}
	keyFile := filepath.Join(t.TempDir(), "client.key")
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: key}), 0o600); err != nil {
		t.Fatal(err)
	}
	o := options{
		server: server.URL, namespace: "ns", caFile: ca, certFile: ca, keyFile: keyFile, rate: 200,
		duration: 2 * time.Second, concurrency: 16, timeout: 5 * time.Second, slack: 20 * time.Millisecond,
	}
	client, err := newClient(o)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := podBody(o.namespace)
	r := &recorder{}
	elapsed := run(context.Background(), o, client, server.URL+"/api/v1/namespaces/ns/pods?dryRun=All", body, r)
	result := r.result(o, elapsed)
	if result.Sent+result.Late != 400 {
		t.Errorf("sent %d + late %d, want the 400 slots of 2 s at 200/s", result.Sent, result.Late)
	}
	if result.Failed != 0 || int64(result.Sent) != calls.Load() || withCertificate.Load() != calls.Load() {
		t.Errorf("failed %d of %d sent, %d calls, %d with a client certificate: %+v",
			result.Failed, result.Sent, calls.Load(), withCertificate.Load(), result.Failures)
	}
	if result.Protocol != "HTTP/2.0" {
		t.Errorf("protocol %q, want HTTP/2.0", result.Protocol)
	}
	if result.Late > 20 {
		t.Logf("%d late of 400 (a busy machine)", result.Late)
	}
}

func TestAFailureKeepsItsStatusAndMessageAndAConnectionErrorIsStatus0(t *testing.T) {
	refusing := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "denied by the webhook", http.StatusForbidden)
	}))
	defer refusing.Close()
	gone := httptest.NewTLSServer(http.NotFoundHandler())
	gone.Close()
	r := &recorder{}
	for _, server := range []*httptest.Server{refusing, gone} {
		r.started()
		send(context.Background(), refusing.Client(), server.URL+"/api/v1/namespaces/ns/pods?dryRun=All", []byte("{}"), r)
	}
	result := r.result(options{rate: 200, concurrency: 1}, time.Second)
	if result.Sent != 2 || result.Failed != 2 || len(result.Failures) != 2 {
		t.Fatalf("result %+v", result)
	}
	if f := result.Failures[0]; f.Status != http.StatusForbidden || f.Message != "denied by the webhook\n" {
		t.Errorf("first failure %+v", f)
	}
	if f := result.Failures[1]; f.Status != 0 || f.Message == "" {
		t.Errorf("second failure %+v", f)
	}
}
