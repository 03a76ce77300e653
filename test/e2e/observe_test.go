package e2e

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/kvpick/kvpick/internal/testutil"
	"github.com/kvpick/kvpick/pkg/extproc/envoyclient"
)

// direct sends a completion straight to a modelsim, bypassing the picker, so
// only the engine's KV events can tell kvpick what it cached.
func direct(t *testing.T, port int, model, prompt string) {
	t.Helper()
	body := fmt.Sprintf(`{"model":%q,"prompt":%q,"max_tokens":2}`, model, prompt)
	resp, err := (&http.Client{Timeout: 30 * time.Second}).Post(fmt.Sprintf("http://127.0.0.1:%d/v1/completions", port),
		"application/json", bytes.NewBufferString(body))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("modelsim answered %d", resp.StatusCode)
	}
}

// heard sends unrelated probes straight to the modelsim on port until
// kvpick hears one's stores: a ZMQ subscriber misses what is published
// before it has joined, however early kvpick dialled, and an engine stores a
// cached prefix only once, so a test's own prompt must wait for this.
func (f *fleet) heard(t *testing.T, port int, model string) {
	t.Helper()
	stored := storedMetric(port)
	deadline := time.Now().Add(20 * time.Second)
	for i := 0; f.metric(t, stored) == 0; i++ {
		if time.Now().After(deadline) {
			t.Fatalf("no BlockStored from 127.0.0.1:%d reached kvpick", port)
		}
		direct(t, port, model, words(fmt.Sprintf("probe%d", i), 40))
		time.Sleep(100 * time.Millisecond)
	}
}

func storedMetric(port int) string {
	return fmt.Sprintf(`kvpick_kvevents_events_total{endpoint="127.0.0.1:%d",type="BlockStored"}`, port)
}

// warmDirect sends prompt straight to the modelsim on port once kvpick
// hears its events, and waits until that prompt's stores arrived.
func (f *fleet) warmDirect(t *testing.T, port int, model, prompt string) {
	t.Helper()
	f.heard(t, port, model)
	stored := storedMetric(port)
	before := f.metric(t, stored)
	direct(t, port, model, prompt)
	f.waitMetric(t, stored, func(v float64) bool { return v > before }, "the prompt's stores never arrived")
	time.Sleep(100 * time.Millisecond) // the rest of the prompt's batches
}

// pathIs waits until endpoint ep's kvpick_kv_observation_path is 1 for path.
func (f *fleet) pathIs(t *testing.T, ep, path string) {
	t.Helper()
	f.waitMetric(t, fmt.Sprintf(`kvpick_kv_observation_path{endpoint=%q,path=%q,pool="default"}`, ep, path),
		func(v float64) bool { return v == 1 }, ep+" not on the "+path+" path")
}

// With the defaults (kv.observation auto) and --router-mode kv alone, as
// Dynamo's flags read: an endpoint that publishes KV events is on the events
// path and earns cache credit from them (its prefix was cached behind the
// picker's back), one that publishes none is on the predicted path (the
// picker's own decisions give affinity), and an endpoint whose events stop
// for longer than kv.eventsSilenceAfter moves to the predicted path and back
// when they resume.
func TestAutoObservationPerEndpoint(t *testing.T) {
	f := startSims(t, []sim{{}, {noKV: true}}, "kv:\n  eventsSilenceAfter: 3s\n", "--router-mode", "kv")
	pub, quiet := fmt.Sprintf("127.0.0.1:%d", f.ports[0]), fmt.Sprintf("127.0.0.1:%d", f.ports[1])
	f.pathIs(t, pub, "predicted")
	f.pathIs(t, quiet, "predicted")

	shared := words("e", 600)
	f.warmDirect(t, f.ports[0], "m", shared+words("x", 20))
	f.pathIs(t, pub, "events")
	c := testutil.DialPicker(t, f.grpc)
	for i := 0; i < 3; i++ {
		if res := sendBody(t, c, shared+words(fmt.Sprintf("r%d", i), 20), ""); res.Status != 200 || res.Endpoint != pub {
			t.Fatalf("request %d: status %d on %s, want %s, which holds the prefix per its events", i, res.Status, res.Endpoint, pub)
		}
	}
	if hits := f.metric(t, `kvpick_kv_hit_ratio_sum{observation="auto",pool="default"}`); hits < 2.5 {
		t.Fatalf("hit ratio sum %v over 3 requests on a prefix cached behind the picker's back, want > 2.5", hits)
	}

	other := words("p", 600)
	if res := sendTo(t, c, other+words("y", 20), quiet); res.Status != 200 || res.Endpoint != quiet {
		t.Fatalf("status %d on %s", res.Status, res.Endpoint)
	}
	for i := 0; i < 3; i++ { // predicted entries for the quiet endpoint keep its prefix there
		if res := sendBody(t, c, other+words(fmt.Sprintf("z%d", i), 20), ""); res.Status != 200 || res.Endpoint != quiet {
			t.Fatalf("request %d: status %d on %s, want %s (predicted path)", i, res.Status, res.Endpoint, quiet)
		}
	}
	f.pathIs(t, quiet, "predicted")

	f.pathIs(t, pub, "predicted") // no traffic: its events stop, past 3s it is silent
	direct(t, f.ports[0], "m", words("again", 100))
	f.pathIs(t, pub, "events")
}

// A LoRA request's blocks, as the engine's events report them (vLLM's
// today's map dialect: lora_name, and the adapter in every block's
// extra_keys), match a later request for the same adapter: both sides are
// seeded with the adapter alone. The first request goes straight to the
// engine, so only its events can credit the second. (The unit test in
// pkg/router covers LoRA routing off, where endpoints list adapters as models.)
func TestLoRAMatchesOnTheEventsPath(t *testing.T) {
	for _, enc := range []string{"map", "array"} {
		t.Run(enc, func(t *testing.T) {
			s := sim{args: []string{"--lora-adapters", "sql", "--kv-events-encoding", enc}, fields: "loraAdapters: [sql]"}
			f := startSims(t, []sim{s, s}, "router:\n  lora:\n    enabled: true\n", "--router-kv-events")
			prefix := words("l", 600)
			f.warmDirect(t, f.ports[1], "sql", prefix+words("a", 20))
			holder := fmt.Sprintf("127.0.0.1:%d", f.ports[1])
			c := testutil.DialPicker(t, f.grpc)
			res := sendModel(t, c, "sql", prefix+words("b", 20))
			if res.Status != 200 || res.Endpoint != holder {
				t.Fatalf("status %d on %s, want the adapter's cache holder %s", res.Status, res.Endpoint, holder)
			}
			if hits := f.metric(t, `kvpick_kv_hit_ratio_sum{observation="events",pool="default"}`); hits < 0.9 {
				t.Fatalf("hit ratio %v for a LoRA request whose prefix the engine reported, want > 0.9", hits)
			}
			if bad := f.metric(t, `kvpick_kvevents_events_total{endpoint="`+holder+`",type="invalid"}`); bad != 0 {
				t.Fatalf("%v events rejected as invalid", bad)
			}
		})
	}
}

// sendModel routes and serves one completion for model.
func sendModel(t *testing.T, c *envoyclient.Client, model, prompt string) *envoyclient.GatewayResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	body := fmt.Sprintf(`{"model":%q,"prompt":%q,"max_tokens":4}`, model, prompt)
	res, err := c.Do(ctx, &http.Client{Timeout: 30 * time.Second}, envoyclient.Request{Method: "POST", Path: "/v1/completions", Body: []byte(body)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// An engine whose events arrive but never hold the blocks of the requests
// routed to it (here: it salts every store, the requests carry no salt) is
// reported by kvpick_kv_events_unmatched; requests that match its blocks
// (the same salt) clear it.
func TestUnmatchedEventsAlarm(t *testing.T) {
	s := sim{args: []string{"--kv-events-encoding", "array", "--kv-events-cache-salt", "tenant-1", "--metrics-style", "sglang"},
		fields: "engine: sglang"}
	f := startSims(t, []sim{s}, "", "--router-kv-events")
	ep := fmt.Sprintf("127.0.0.1:%d", f.ports[0])
	alarm := fmt.Sprintf(`kvpick_kv_events_unmatched{endpoint=%q,pool="default"}`, ep)
	c := testutil.DialPicker(t, f.grpc)
	send := func(tag, extra string, n int) {
		for i := 0; i < n; i++ {
			if res := sendBody(t, c, words(fmt.Sprintf("%s%d", tag, i), 100), extra); res.Status != 200 {
				t.Fatalf("status %d: %s", res.Status, res.Body)
			}
		}
	}
	send("plain", "", 12)
	f.waitMetric(t, alarm, func(v float64) bool { return v == 1 }, "salted stores never matched unsalted requests, but no alarm")
	send("salted", `,"cache_salt":"tenant-1"`, 4)
	f.waitMetric(t, alarm, func(v float64) bool { return v == 0 }, "matching requests did not clear the alarm")
}

// A prompt the engine refuses (over its max_model_len: modelsim answers 400,
// as vLLM does) leaves no predicted prefix behind: the picker takes back the
// blocks only it claimed, so the index holds what it held before, and
// kvpick_kvindex_retracted_total counts them.
func TestRefusedPromptLeavesNoPredictedPrefix(t *testing.T) {
	long := sim{noKV: true, args: []string{"--max-model-len", "1024"}}
	f := startSims(t, []sim{long, long}, "", "--router-mode", "kv")
	c := testutil.DialPicker(t, f.grpc)
	prefix := words("q", 100)
	if res := sendBody(t, c, prefix, ""); res.Status != 200 {
		t.Fatalf("status %d for a short prompt", res.Status)
	}
	entries := `kvpick_kvindex_entries{index="default",path="predicted"}`
	before := f.metric(t, entries)
	if before == 0 {
		t.Fatal("no predicted entries after a routed prompt")
	}
	if res := sendBody(t, c, prefix+words("z", 2000), ""); res.Status != 400 {
		t.Fatalf("status %d for a prompt over max_model_len, want the engine's 400", res.Status)
	}
	f.waitMetric(t, `kvpick_kvindex_retracted_total{index="default"}`, func(v float64) bool { return v > 0 },
		"the refused prompt's prefix was not taken back")
	if after := f.metric(t, entries); after != before {
		t.Fatalf("predicted entries %v after the refusal, want the %v held before it", after, before)
	}
}
