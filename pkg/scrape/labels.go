package scrape

import "bytes"

// lexLabels parses the inside of {...}: `name="value"` items separated by
// commas (a trailing comma is allowed). A quoted item without "=" is the
// metric name in the UTF-8 exposition syntax and is returned as qname.
func lexLabels(raw []byte, out labelSet) (labelSet, []byte, error) {
	var qname []byte
	i := skipBlank(raw, 0)
	for i < len(raw) {
		name, quoted, next, err := lexLabelName(raw, i)
		if err != nil {
			return nil, nil, err
		}
		i = skipBlank(raw, next)
		if i < len(raw) && raw[i] == '=' {
			var val []byte
			val, i, err = lexQuoted(raw, skipBlank(raw, i+1))
			if err != nil {
				return nil, nil, err
			}
			out = append(out, pair{name: name, value: val})
		} else if quoted && qname == nil {
			qname = name
		} else {
			return nil, nil, errLabelSyntax
		}
		if i, err = skipComma(raw, i); err != nil {
			return nil, nil, err
		}
	}
	return out, qname, nil
}

// lexLabelName reads a bare or quoted label name starting at raw[i].
func lexLabelName(raw []byte, i int) (name []byte, quoted bool, next int, err error) {
	if raw[i] == '"' {
		name, next, err = lexQuoted(raw, i)
		return name, true, next, err
	}
	j := i
	for j < len(raw) && raw[j] != '=' && raw[j] != ',' && !isBlank(raw[j]) {
		j++
	}
	if j == i {
		return nil, false, 0, errLabelSyntax
	}
	return raw[i:j], false, j, nil
}

// skipComma consumes the separator after an item, if any.
func skipComma(raw []byte, i int) (int, error) {
	i = skipBlank(raw, i)
	if i == len(raw) {
		return i, nil
	}
	if raw[i] != ',' {
		return 0, errLabelSyntax
	}
	return skipBlank(raw, i+1), nil
}

func skipBlank(raw []byte, i int) int {
	for i < len(raw) && isBlank(raw[i]) {
		i++
	}
	return i
}

// lexQuoted reads the quoted string at raw[i], unescaping \\, \" and \n.
// The result aliases raw unless it contained escapes.
func lexQuoted(raw []byte, i int) ([]byte, int, error) {
	if i >= len(raw) || raw[i] != '"' {
		return nil, 0, errLabelSyntax
	}
	end, err := skipQuoted(raw, i)
	if err != nil {
		return nil, 0, err
	}
	s := raw[i+1 : end-1]
	if bytes.IndexByte(s, '\\') < 0 {
		return s, end, nil
	}
	return unescape(s), end, nil
}

func unescape(s []byte) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			out = append(out, s[i])
			continue
		}
		i++
		if s[i] == 'n' {
			out = append(out, '\n')
		} else {
			out = append(out, s[i])
		}
	}
	return out
}
