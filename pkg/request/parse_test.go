package request

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"github.com/kvpick/kvpick/pkg/apierr"
)

type parseCase struct {
	name string
	kind Kind
	body string
	want Request
}

const (
	kC  = KindCompletions
	kCh = KindChatCompletions
	kR  = KindResponses
	kE  = KindEmbeddings
)

// long40 is longer than the word loop's stretch, so strings holding it take
// the IndexByte path.
var long40 = strings.Repeat("0123456789", 4)

var parseCases = []parseCase{
	{"completion string", kC, `{"model":"m","prompt":"hello"}`, Request{Model: "m", Prompt: []byte("hello")}},
	{"completion list", kC, `{"model":"m","prompt":["a","b"]}`, Request{Model: "m", Prompt: []byte("a\nb")}},
	{"completion ids", kC, `{"model":"m","prompt":[1,2,4294967295]}`, Request{Model: "m", PromptTokenIDs: []uint32{1, 2, 4294967295}}},
	{"completion id lists", kC, `{"model":"m","prompt":[[1],[2,3],[]]}`, Request{Model: "m", PromptTokenIDs: []uint32{1, 2, 3}}},
	{"completion ids with spaces", kC, `{"model":"m","prompt":[ 0 , 10 ,4294967295 ]}`, Request{Model: "m", PromptTokenIDs: []uint32{0, 10, 4294967295}}},
	{"completion empty string", kC, `{"model":"m","prompt":""}`, Request{Model: "m"}},
	{"options", kC, ` {"stream":true,"stream_options":{"include_usage":true,"x":1},"max_tokens":9,"cache_salt":"s","user":"u","model":"m","prompt":"p"} `,
		Request{Model: "m", Prompt: []byte("p"), Stream: true, IncludeUsage: true, MaxTokens: 9, CacheSalt: "s", User: "u"}},
	{"nulls are unset", kC, `{"model":"m","prompt":"p","stream":null,"stream_options":null,"max_tokens":null,"user":null,"cache_salt":null}`,
		Request{Model: "m", Prompt: []byte("p")}},
	{"max_completion_tokens wins", kCh, `{"model":"m","messages":[{"role":"user","content":"x"}],"max_tokens":5,"max_completion_tokens":7}`,
		Request{Model: "m", Prompt: []byte("<|user|>\nx\n"), MaxTokens: 7}},
	{"unicode escapes", kC, `{"model":"m\u00e9","prompt":"\u0041\ud83d\ude00\n\t\"\\\/\b\f\r\ud800x\udc00"}`,
		Request{Model: "mé", Prompt: []byte("A\U0001F600\n\t\"\\/\b\f\r\uFFFDx\uFFFD")}},
	{"invalid utf8 replaced", kC, "{\"model\":\"m\",\"prompt\":\"a\xffb\xc3\"}", Request{Model: "m", Prompt: []byte("a\uFFFDb\uFFFD")}},
	{"unknown fields skipped", kC, `{"model":"m","tools":[{"a":{"b":[1,2.5e-3,true,false,null]}}],"prompt":"p","messages":5}`,
		Request{Model: "m", Prompt: []byte("p")}},
	{"duplicate keys: last wins", kC, `{"model":"a","prompt":[1],"model":"b","prompt":"q"}`, Request{Model: "b", Prompt: []byte("q")}},
	{"escaped key", kC, `{"mod\u0065l":"m","prompt":"p"}`, Request{Model: "m", Prompt: []byte("p")}},
	{"chat", kCh, `{"model":"m","messages":[{"role":"system","content":"be brief"},{"role":"user","content":"hi"}]}`,
		Request{Model: "m", Prompt: []byte("<|system|>\nbe brief\n<|user|>\nhi\n")}},
	{"chat parts", kCh, `{"model":"m","messages":[{"role":"user","content":[{"type":"text","text":"a"},{"type":"image_url","image_url":{"url":"data:"}},{"text":"b","type":"text"}]}]}`,
		Request{Model: "m", Prompt: []byte("<|user|>\na\nb\n")}},
	{"chat content before role", kCh, `{"model":"m","messages":[{"content":"x","name":"n","role":"user"}]}`,
		Request{Model: "m", Prompt: []byte("<|user|>\nx\n")}},
	{"chat null content", kCh, `{"model":"m","messages":[{"role":"assistant","content":null,"tool_calls":[]},{"role":"tool"}]}`,
		Request{Model: "m", Prompt: []byte("<|assistant|>\n<|tool|>\n")}},
	{"chat duplicate role and content", kCh, `{"model":"m","messages":[{"role":"a","content":"x","role":"b","content":"y"}]}`,
		Request{Model: "m", Prompt: []byte("<|b|>\ny\n")}},
	{"chat duplicate text", kCh, `{"model":"m","messages":[{"role":"u","content":[{"type":"text","text":"x","text":"y"}]}]}`,
		Request{Model: "m", Prompt: []byte("<|u|>\ny\n")}},
	{"chat part type changes", kCh, `{"model":"m","messages":[{"role":"u","content":[{"type":"text","text":"x","type":"image"}]}]}`,
		Request{Model: "m", Prompt: []byte("<|u|>\n")}},
	{"responses string", kR, `{"model":"m","input":"q","instructions":"sys","max_output_tokens":3}`,
		Request{Model: "m", Prompt: []byte("<|system|>\nsys\n<|user|>\nq\n"), MaxTokens: 3}},
	{"responses items", kR, `{"model":"m","input":[{"type":"message","role":"user","content":[{"type":"input_text","text":"q"},{"type":"input_image","image_url":"u"}]},{"type":"function_call_output","output":"o"},{"role":"assistant","content":[{"type":"output_text","text":"a"}]}]}`,
		Request{Model: "m", Prompt: []byte("<|user|>\nq\n<|assistant|>\na\n")}},
	{"long runs with escapes and bad UTF-8", kC, `{"model":"m","prompt":"` + long40 + `\n` + long40 + "\xff" + long40 + `\ud83d\ude00"}`,
		Request{Model: "m", Prompt: []byte(long40 + "\n" + long40 + "\uFFFD" + long40 + "\U0001F600")}},
	{"long chat content", kCh, `{"model":"m","messages":[{"content":"` + long40 + `é\"` + long40 + `","role":"user"}]}`,
		Request{Model: "m", Prompt: []byte("<|user|>\n" + long40 + "é\"" + long40 + "\n")}},
	{"long skipped string", kC, `{"model":"m","image":"` + long40 + long40 + `\/x","prompt":"p"}`, Request{Model: "m", Prompt: []byte("p")}},
	{"embeddings string", kE, `{"model":"m","input":"x"}`, Request{Model: "m", Prompt: []byte("x")}},
	{"embeddings list", kE, `{"model":"m","input":["x","y"]}`, Request{Model: "m", Prompt: []byte("x\ny")}},
	{"embeddings ids", kE, `{"model":"m","input":[[5,6]]}`, Request{Model: "m", PromptTokenIDs: []uint32{5, 6}}},
}

func TestParse(t *testing.T) {
	for _, tc := range parseCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Parse(tc.kind, []byte(tc.body))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			want := tc.want
			want.Kind, want.Raw = tc.kind, []byte(tc.body)
			if diff := compareRequests(got, &want); diff != "" || !slices.Equal(got.Raw, want.Raw) {
				t.Errorf("%s\ngot  %+v", diff, got)
			}
		})
	}
}

func TestParseRawAliasesBody(t *testing.T) {
	body := []byte(`{"model":"m","prompt":"p"}`)
	got, err := Parse(KindCompletions, body)
	if err != nil || &got.Raw[0] != &body[0] {
		t.Fatalf("Raw does not alias the body (err %v)", err)
	}
	body[len(body)-3] = 'X' // the prompt string must not alias the body
	if string(got.Prompt) != "p" || got.Model != "m" {
		t.Errorf("strings changed with the body: %q %q", got.Model, got.Prompt)
	}
}

// TestParsePromptIsACopy checks that Prompt never aliases the pooled
// scratch buffer it was rendered in: later Parse calls, which reuse that
// buffer, must not change an earlier Request's Prompt.
func TestParsePromptIsACopy(t *testing.T) {
	type parsed struct {
		req  *Request
		want string
	}
	var got []parsed
	for round := range 3 {
		text := strings.Repeat(string(rune('a'+round)), 1<<16)
		huge := strings.Repeat(string(rune('A'+round)), maxPooled+1) // not pooled: handed over
		cases := []struct {
			kind       Kind
			body, want string
		}{
			{KindChatCompletions, `{"model":"m","messages":[{"role":"user","content":[{"type":"image_url","image_url":{"url":"data:image/png;base64,` +
				text + `"}},{"type":"text","text":"what is this?"}]}]}`, "<|user|>\nwhat is this?\n"},
			{KindChatCompletions, `{"model":"m","messages":[{"role":"user","content":"` + text + `"}]}`, "<|user|>\n" + text + "\n"},
			{KindResponses, `{"model":"m","input":"` + text + `","instructions":"sys"}`, "<|system|>\nsys\n<|user|>\n" + text + "\n"},
			{KindCompletions, `{"model":"m","prompt":"` + huge + `"}`, huge},
		}
		for _, c := range cases {
			req, err := Parse(c.kind, []byte(c.body))
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, parsed{req, c.want})
			if _, err := Parse(c.kind, []byte(c.body[:len(c.body)-4])); err == nil { // errors release the buffer too
				t.Fatal("truncated body accepted")
			}
		}
	}
	for i, g := range got {
		if string(g.req.Prompt) != g.want {
			t.Fatalf("request %d: Prompt changed after later parses (len %d, want %d)", i, len(g.req.Prompt), len(g.want))
		}
	}
}

var parseErrorCases = []struct {
	kind Kind
	body string
	want string
}{
	{kC, ``, "malformed JSON at byte 0: unexpected end of input"},
	{kC, `{"model":"m","prompt":"p"`, "malformed JSON at byte 25: unexpected end of input"},
	{kC, `{"model":"m","prompt":"p"} x`, "malformed JSON at byte 27: unexpected data after top-level value"},
	{kC, `{"model":"m" "prompt":"p"}`, "malformed JSON at byte 13: expected ',' or '}'"},
	{kC, `{"model":"m","prompt":"a` + "\n" + `"}`, "malformed JSON at byte 24: control character in string"},
	{kC, `{"model":"m","prompt":"\x"}`, "malformed JSON at byte 24: invalid escape"},
	{kC, `{"model":"m","prompt":"` + long40 + "\t" + `"}`, "malformed JSON at byte 63: control character in string"},
	{kC, `{"model":"m","x":"` + long40 + "\x00" + `","prompt":"p"}`, "malformed JSON at byte 58: control character in string"},
	{kC, `{"model":"m","prompt":"` + long40, "malformed JSON at byte 63: unexpected end of input in string"},
	{kC, `{"model":"m","prompt":"\u12"}`, "invalid \\u escape"},
	{kC, `{"model":"m","prompt":"p","n":01}`, "malformed JSON at byte 31"},
	{kC, `{"model":"m","prompt":"p","n":tru}`, "invalid literal"},
	{kC, `{"model":"m","prompt":"p",}`, "expected string key"},
	{kC, `{"model":"m","prompt":"p","x":[1,]}`, "expected a value"},
	{kC, `[1,2]`, "request body must be a JSON object"},
	{kC, `{"prompt":"p"}`, "model is required"},
	{kC, `{"model":"","prompt":"p"}`, "model must be a non-empty string"},
	{kC, `{"model":5,"prompt":"p"}`, "model must be a non-empty string"},
	{kC, `{"model":null,"prompt":"p"}`, "model must be a non-empty string"},
	{kC, `{"model":"m"}`, "prompt is required"},
	{kC, `{"model":"m","prompt":null}`, "prompt is required"},
	{kC, `{"model":"m","prompt":[]}`, "prompt must not be an empty list"},
	{kC, `{"model":"m","prompt":["a",1]}`, "prompt must be a string, a list of strings"},
	{kC, `{"model":"m","prompt":[1,-2]}`, "prompt token ids must be integers in [0, 4294967295], got -2"},
	{kC, `{"model":"m","prompt":[4294967296]}`, "got 4294967296"},
	{kC, `{"model":"m","prompt":[1.5]}`, "got 1.5"},
	{kC, `{"model":"m","prompt":[1e3]}`, "got 1e3"},
	{kC, `{"model":"m","prompt":[12345678901]}`, "got 12345678901"},
	{kC, `{"model":"m","prompt":[01]}`, "malformed JSON at byte 24: expected ',' or ']'"},
	{kC, `{"model":"m","prompt":[[1,"a"]]}`, "prompt must be a string, a list of strings"},
	{kC, `{"model":"m","prompt":[[1],2]}`, "prompt must be a string, a list of strings"},
	{kC, `{"model":"m","prompt":{}}`, "prompt must be a string"},
	{kC, `{"model":"m","prompt":"p","stream":"yes"}`, "stream must be a boolean"},
	{kC, `{"model":"m","prompt":"p","stream_options":{"include_usage":1}}`, "stream_options.include_usage must be a boolean"},
	{kC, `{"model":"m","prompt":"p","stream_options":[]}`, "stream_options must be an object"},
	{kC, `{"model":"m","prompt":"p","max_tokens":-1}`, "max_tokens must be an integer in [0, 2147483647], got -1"},
	{kC, `{"model":"m","prompt":"p","max_tokens":"5"}`, "max_tokens must be an integer"},
	{kC, `{"model":"m","prompt":"p","user":1}`, "user must be a string"},
	{kC, `{"model":"m","prompt":"p","cache_salt":{}}`, "cache_salt must be a string"},
	{kCh, `{"model":"m"}`, "messages is required"},
	{kCh, `{"model":"m","messages":[]}`, "messages must not be empty"},
	{kCh, `{"model":"m","messages":"hi"}`, "messages must be a list of message objects"},
	{kCh, `{"model":"m","messages":["hi"]}`, "messages[0] must be a message object"},
	{kCh, `{"model":"m","messages":[{"role":"u","content":"x"},{"content":"x"}]}`, "messages[1].role is required"},
	{kCh, `{"model":"m","messages":[{"role":7,"content":"x"}]}`, "messages[0].role must be a string"},
	{kCh, `{"model":"m","messages":[{"role":"u","content":7}]}`, "messages[0].content must be a string, a list of content parts or null"},
	{kCh, `{"model":"m","messages":[{"role":"u","content":["x"]}]}`, "messages[0].content[0] must be a content part object"},
	{kCh, `{"model":"m","messages":[{"role":"u","content":[{"type":"text","text":1}]}]}`, "messages[0].content[0].text must be a string"},
	{kR, `{"model":"m"}`, "input is required"},
	{kR, `{"model":"m","input":5}`, "input must be a string or a list of input items"},
	{kR, `{"model":"m","input":"x","instructions":5}`, "instructions must be a string"},
	{kR, `{"model":"m","input":[1]}`, "input[0] must be a message object"},
	{kE, `{"model":"m"}`, "input is required"},
	{kE, `{"model":"m","input":true}`, "input must be a string, a list of strings"},
}

func TestParseErrors(t *testing.T) {
	for _, tc := range parseErrorCases {
		_, err := Parse(tc.kind, []byte(tc.body))
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Status != 400 || ae.Type != apierr.TypeInvalidRequest {
			t.Errorf("%s: err = %v, want a 400 invalid_request_error", tc.body, err)
			continue
		}
		if !strings.Contains(ae.Message, tc.want) {
			t.Errorf("%s: message %q, want it to contain %q", tc.body, ae.Message, tc.want)
		}
	}
}

func TestParseKinds(t *testing.T) {
	if r, err := Parse(KindModels, nil); err != nil || r.Kind != KindModels {
		t.Errorf("models: %v, %v", r, err)
	}
	if _, err := Parse(KindUnknown, []byte(`{}`)); err == nil {
		t.Error("unknown kind: no error")
	}
}

func TestNestingLimit(t *testing.T) {
	nest := func(n int) []byte {
		return []byte(`{"model":"m","prompt":"p","x":` + strings.Repeat("[", n-1) + strings.Repeat("]", n-1) + `}`)
	}
	if _, err := Parse(KindCompletions, nest(10000)); err != nil {
		t.Errorf("depth 10000: %v", err)
	}
	if _, err := Parse(KindCompletions, nest(10001)); err == nil || !strings.Contains(err.Error(), "nesting") {
		t.Errorf("depth 10001: err = %v, want a nesting error", err)
	}
}

func TestKindForPath(t *testing.T) {
	tests := []struct {
		path string
		want Kind
	}{
		{"/v1/completions", KindCompletions},
		{"/v1/chat/completions?x=1", KindChatCompletions},
		{"/v1/chat/completions/", KindChatCompletions},
		{"/v1/responses", KindResponses},
		{"/v1/embeddings#f", KindEmbeddings},
		{"/v1/models", KindModels},
		{"/v1/models/llama", KindModels},
	}
	for _, tc := range tests {
		if got, err := KindForPath(tc.path); err != nil || got != tc.want {
			t.Errorf("KindForPath(%q) = %v, %v; want %v", tc.path, got, err, tc.want)
		}
	}
	for _, path := range []string{"/", "", "/v1/chat", "/v2/completions", "/v1/completions/x"} {
		_, err := KindForPath(path)
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Status != 404 || !strings.Contains(ae.Message, path) {
			t.Errorf("KindForPath(%q): err = %v, want a 404 naming the path", path, err)
		}
	}
}

// TestParseIntoAliasesScratch: ParseInto renders the prompt into the caller's buffer (grown when short) and the
// Prompt points into it; a later ParseInto with the same buffer reuses its storage.
func TestParseIntoAliasesScratch(t *testing.T) {
	var scratch []byte
	body := []byte(`{"model":"m","prompt":"hello \"world\" 日本","user":"a long enough body for the next one"}`)
	r, err := ParseInto(KindCompletions, body, &scratch)
	if err != nil || string(r.Prompt) != `hello "world" 日本` {
		t.Fatalf("ParseInto = %+v, %v", r, err)
	}
	if cap(scratch) < len(r.Prompt) || unsafe.SliceData(r.Prompt) != unsafe.SliceData(scratch[:1]) {
		t.Fatal("Prompt does not alias the caller's scratch")
	}
	storage := unsafe.SliceData(scratch[:1])
	r2, err := ParseInto(KindChatCompletions, []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`), &scratch)
	if err != nil || unsafe.SliceData(scratch[:1]) != storage {
		t.Fatalf("second ParseInto: %v, storage reused %v", err, unsafe.SliceData(scratch[:1]) == storage)
	}
	if want, _ := Parse(KindChatCompletions, []byte(`{"model":"m","messages":[{"role":"user","content":"hi"}]}`)); string(r2.Prompt) != string(want.Prompt) {
		t.Fatalf("ParseInto prompt %q, Parse %q", r2.Prompt, want.Prompt)
	}
	if _, err := ParseInto(KindCompletions, []byte(`{"model":`), &scratch); err == nil {
		t.Fatal("malformed body accepted")
	}
}
