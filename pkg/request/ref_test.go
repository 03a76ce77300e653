package request

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"strings"
)

// refParse is a slow reference for Parse built on encoding/json: maps of
// json.RawMessage give the same last-key-wins semantics. The differential
// fuzz test checks Parse against it.
func refParse(kind Kind, body []byte) (*Request, error) {
	if !json.Valid(body) {
		return nil, errors.New("malformed JSON")
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(body, &top) != nil || top == nil {
		return nil, errors.New("not an object")
	}
	r := &Request{Kind: kind, Raw: body}
	var err error
	if r.Model, err = refString(top["model"], false); err != nil || r.Model == "" {
		return nil, errors.New("model")
	}
	if err := refOptions(top, r); err != nil {
		return nil, err
	}
	return r, refPrompt(kind, top, r)
}

func refOptions(top map[string]json.RawMessage, r *Request) error {
	var err error
	var errs [8]error
	r.Stream, errs[0] = refBool(top["stream"])
	if so := top["stream_options"]; isNull(so) {
	} else if so[0] != '{' {
		errs[1] = errors.New("stream_options")
	} else {
		var m map[string]json.RawMessage
		json.Unmarshal(so, &m)
		r.IncludeUsage, errs[1] = refBool(m["include_usage"])
	}
	var mt [3]int
	for i, k := range []string{"max_completion_tokens", "max_tokens", "max_output_tokens"} {
		mt[i], errs[2+i] = refCount(top[k])
	}
	r.MaxTokens = firstNonZero(mt[:])
	r.CacheSalt, errs[5] = refString(top["cache_salt"], true)
	r.User, errs[6] = refString(top["user"], true)
	if err = errors.Join(errs[:]...); err != nil {
		return err
	}
	return nil
}

func isNull(raw json.RawMessage) bool { return raw == nil || string(raw) == "null" }

func refString(raw json.RawMessage, nullable bool) (string, error) {
	if isNull(raw) && nullable {
		return "", nil
	}
	if raw == nil || raw[0] != '"' {
		return "", errors.New("not a string")
	}
	var s string
	err := json.Unmarshal(raw, &s)
	return s, err
}

func refBool(raw json.RawMessage) (bool, error) {
	if isNull(raw) {
		return false, nil
	}
	var b bool
	err := json.Unmarshal(raw, &b)
	return b, err
}

func refCount(raw json.RawMessage) (int, error) {
	if isNull(raw) {
		return 0, nil
	}
	if raw[0] != '-' && (raw[0] < '0' || raw[0] > '9') {
		return 0, errors.New("not a number")
	}
	v, err := strconv.ParseUint(string(raw), 10, 64)
	if err != nil || v > math.MaxInt32 {
		return 0, errors.New("bad count")
	}
	return int(v), nil
}

func refPrompt(kind Kind, top map[string]json.RawMessage, r *Request) error {
	var b strings.Builder
	var err error
	switch kind {
	case KindCompletions:
		err = refPromptValue(top["prompt"], &b, r)
	case KindEmbeddings:
		err = refPromptValue(top["input"], &b, r)
	case KindChatCompletions:
		err = refMessages(top["messages"], &b)
	case KindResponses:
		err = refResponses(top, &b)
	}
	r.Prompt = []byte(b.String())
	return err
}

func refPromptValue(raw json.RawMessage, b *strings.Builder, r *Request) error {
	if isNull(raw) {
		return errors.New("missing")
	}
	switch raw[0] {
	case '"':
		s, _ := refString(raw, false)
		b.WriteString(s)
		return nil
	case '[':
		var list []json.RawMessage
		json.Unmarshal(raw, &list)
		if len(list) == 0 {
			return errors.New("empty")
		}
		return refPromptList(list, b, r)
	}
	return errors.New("bad prompt")
}

func refPromptList(list []json.RawMessage, b *strings.Builder, r *Request) error {
	shape := shapeOf(list[0][0])
	for i, el := range list {
		if shapeOf(el[0]) != shape || shape == shapeNone {
			return errors.New("mixed")
		}
		switch shape {
		case shapeStrings:
			if i > 0 {
				b.WriteByte('\n')
			}
			s, _ := refString(el, false)
			b.WriteString(s)
		case shapeIDs:
			var id uint32
			if err := json.Unmarshal(el, &id); err != nil || bytes.ContainsAny(el, ".eE") {
				return errors.New("bad id")
			}
			r.PromptTokenIDs = append(r.PromptTokenIDs, id)
		case shapeIDLists:
			var ids []json.RawMessage
			json.Unmarshal(el, &ids)
			if err := refIDs(ids, r); err != nil {
				return err
			}
		}
	}
	return nil
}

func refIDs(ids []json.RawMessage, r *Request) error {
	for _, el := range ids {
		var id uint32
		if shapeOf(el[0]) != shapeIDs || json.Unmarshal(el, &id) != nil || bytes.ContainsAny(el, ".eE") {
			return errors.New("bad id")
		}
		r.PromptTokenIDs = append(r.PromptTokenIDs, id)
	}
	return nil
}

func refMessages(raw json.RawMessage, b *strings.Builder) error {
	if isNull(raw) || raw[0] != '[' {
		return errors.New("messages")
	}
	var list []json.RawMessage
	json.Unmarshal(raw, &list)
	if len(list) == 0 {
		return errors.New("empty")
	}
	for _, m := range list {
		if err := refMessage(m, b, true); err != nil {
			return err
		}
	}
	return nil
}

func refResponses(top map[string]json.RawMessage, b *strings.Builder) error {
	if in := top["instructions"]; !isNull(in) {
		s, err := refString(in, false)
		if err != nil {
			return err
		}
		b.WriteString("<|system|>\n" + s + "\n")
	}
	raw := top["input"]
	if isNull(raw) {
		return errors.New("missing")
	}
	switch raw[0] {
	case '"':
		s, _ := refString(raw, false)
		b.WriteString("<|user|>\n" + s + "\n")
		return nil
	case '[':
		var list []json.RawMessage
		json.Unmarshal(raw, &list)
		for _, m := range list {
			if err := refMessage(m, b, false); err != nil {
				return err
			}
		}
		return nil
	}
	return errors.New("bad input")
}

func refMessage(raw json.RawMessage, b *strings.Builder, requireRole bool) error {
	if raw[0] != '{' {
		return errors.New("message")
	}
	var m map[string]json.RawMessage
	json.Unmarshal(raw, &m)
	roleRaw, ok := m["role"]
	if !ok && !requireRole {
		return nil
	}
	role, err := refString(roleRaw, false)
	if err != nil {
		return err
	}
	b.WriteString("<|" + role + "|>\n")
	return refContent(m["content"], b)
}

func refContent(raw json.RawMessage, b *strings.Builder) error {
	if isNull(raw) {
		return nil
	}
	switch raw[0] {
	case '"':
		s, _ := refString(raw, false)
		b.WriteString(s + "\n")
		return nil
	case '[':
		var parts []json.RawMessage
		json.Unmarshal(raw, &parts)
		for _, part := range parts {
			if err := refPart(part, b); err != nil {
				return err
			}
		}
		return nil
	}
	return errors.New("content")
}

func refPart(raw json.RawMessage, b *strings.Builder) error {
	if raw[0] != '{' {
		return errors.New("part")
	}
	var m map[string]json.RawMessage
	json.Unmarshal(raw, &m)
	t, err := refString(m["type"], false)
	if err != nil || !isTextType([]byte(t)) {
		return nil
	}
	text, ok := m["text"]
	if !ok {
		return nil
	}
	s, err := refString(text, false)
	if err != nil {
		return err
	}
	b.WriteString(s + "\n")
	return nil
}
