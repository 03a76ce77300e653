package workload

// AppendText appends the prompt text a client would send for tokens: each
// token becomes a word of 1 to 5 letters and a space (4 bytes on average,
// what BPE tokenizers average on English), chosen by the token id alone. So
// prompts that share a token prefix share a text prefix, and a picker that
// only sees text estimates the length and block boundaries the way it would
// in production: approximately. Routing benchmarks give policies this view,
// never the engine's token ids, unless a policy has exact tokens in
// production.
func AppendText(dst []byte, tokens []uint32) []byte {
	for _, t := range tokens {
		h := mix64(uint64(t) + 0x7465787421)
		n := 1 + int(h%5)
		h /= 5
		for range n {
			dst = append(dst, 'a'+byte(h%26))
			h /= 26
		}
		dst = append(dst, ' ')
	}
	return dst
}
