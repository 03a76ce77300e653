package tokenize

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// newLocalServer starts an httptest server bound to 127.0.0.1 only.
func newLocalServer(t *testing.T, h http.HandlerFunc) *httptest.Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &httptest.Server{Listener: l, Config: &http.Server{Handler: h}}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

func TestRemoteTokenize(t *testing.T) {
	srv := newLocalServer(t, func(w http.ResponseWriter, r *http.Request) {
		var req remoteRequest
		if r.Method != http.MethodPost || r.URL.Path != "/tokenize" || json.NewDecoder(r.Body).Decode(&req) != nil {
			http.Error(w, "bad request", http.StatusBadRequest)
			return
		}
		switch req.Prompt {
		case "missing":
			w.Write([]byte(`{"count":0}`))
		case "garbage":
			w.Write([]byte(`{"tokens":[1,`))
		case "empty":
			w.Write([]byte(`{"tokens":[],"count":0}`))
		case "fail":
			http.Error(w, "model not loaded", http.StatusNotFound)
		default:
			if req.Model != "llama" {
				http.Error(w, "wrong model", http.StatusBadRequest)
				return
			}
			w.Write([]byte(`{"count":3,"max_model_len":8192,"tokens":[128000,9906,1917]}`))
		}
	})
	r := NewRemote(srv.URL+"/", &http.Client{Timeout: 5 * time.Second})
	if !r.Exact() || r.Name() != "remote" {
		t.Errorf("Exact=%v Name=%q", r.Exact(), r.Name())
	}
	tests := []struct {
		prompt  string
		want    []uint32
		wantErr string
	}{
		{"Hello world", []uint32{5, 128000, 9906, 1917}, ""},
		{"empty", []uint32{5}, ""},
		{"missing", nil, `no "tokens"`},
		{"garbage", nil, "decode response"},
		{"fail", nil, "status 404: model not loaded"},
	}
	for _, tc := range tests {
		got, err := r.Tokenize(context.Background(), "llama", []byte(tc.prompt), []uint32{5})
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), srv.URL+"/tokenize") {
				t.Errorf("%s: err = %v, want %q naming the URL", tc.prompt, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !equal(got, tc.want) {
			t.Errorf("%s: got %v, %v; want %v", tc.prompt, got, err, tc.want)
		}
	}
}

func TestRemoteTransportError(t *testing.T) {
	srv := newLocalServer(t, func(http.ResponseWriter, *http.Request) {})
	url := srv.URL
	srv.Close()
	_, err := NewRemote(url, nil).Tokenize(context.Background(), "m", []byte("x"), nil)
	if err == nil || !strings.Contains(err.Error(), url) {
		t.Errorf("err = %v, want one naming %s", err, url)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewRemote(url, nil).Tokenize(ctx, "m", []byte("x"), nil); err == nil {
		t.Error("cancelled context: no error")
	}
}

func equal(a, b []uint32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
