package main

import "github.com/kvpick/kvpick/pkg/tokenize"

// vocab is the output side of modelsim's tokenizer. Generated tokens are
// drawn from short pronounceable words (" ba", " kelo", ...), each of which
// tokenize.Approx maps to exactly one token, so the text modelsim returns
// re-tokenizes to the very ids its engine cached (a later chat turn that
// quotes the answer can hit those blocks).
type vocab struct {
	ids  []uint32
	text map[uint32]string
}

func newVocab() *vocab {
	const cons, vows = "bdfghklmnprstvz", "aeiou"
	v := &vocab{text: make(map[uint32]string)}
	var syll []string
	for _, c := range cons {
		for _, w := range vows {
			syll = append(syll, string(c)+string(w))
		}
	}
	words := append([]string(nil), syll...)
	for _, a := range syll {
		for _, b := range syll {
			words = append(words, a+b)
		}
	}
	var buf []uint32
	for _, w := range words {
		w = " " + w
		buf = tokenize.Approx(buf[:0], w)
		if len(buf) != 1 {
			continue
		}
		if _, dup := v.text[buf[0]]; dup {
			continue
		}
		v.text[buf[0]] = w
		v.ids = append(v.ids, buf[0])
	}
	return v
}

// appendText appends the text of token id (empty for ids not from vocab).
func (v *vocab) appendText(dst []byte, id uint32) []byte {
	return append(dst, v.text[id]...)
}
