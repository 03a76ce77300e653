package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// mdColumns are the README's routebench table columns (keys of the JSON summary).
var mdColumns = []pageColumn{
	{"policy", "policy", "%s"}, {"ttftP50", "TTFT p50 (s)", "%.3f"}, {"ttftP95", "p95", "%.3f"},
	{"ttftP99", "p99", "%.3f"}, {"prefixHit", "prefix hit", "%.3f"}, {"rejected", "rejected", "%.0f"},
}

// writeMarkdown writes, beside each JSON report in dir, a Markdown table of
// it (NAME.md): the form the README quotes, so `make readme-check` can
// regenerate the README's figures and compare.
func writeMarkdown(dir string) error {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil || len(files) == 0 {
		return fmt.Errorf("markdown: no routebench JSON reports in %s", dir)
	}
	for _, f := range files {
		j, err := readPageJSON(f)
		if err != nil {
			return fmt.Errorf("markdown: %w", err)
		}
		path := strings.TrimSuffix(f, ".json") + ".md"
		if err := os.WriteFile(path, []byte(markdownTable(j.Results)), 0o644); err != nil {
			return fmt.Errorf("markdown: %w", err)
		}
	}
	return nil
}

// markdownTable is one row per policy with mdColumns.
func markdownTable(results []map[string]any) string {
	var b strings.Builder
	headers := make([]string, len(mdColumns))
	rule := make([]string, len(mdColumns))
	for i, c := range mdColumns {
		headers[i], rule[i] = c.header, "---"
	}
	fmt.Fprintf(&b, "| %s |\n| %s |\n", strings.Join(headers, " | "), strings.Join(rule, " | "))
	for _, res := range results {
		fmt.Fprintf(&b, "| %s |\n", strings.Join(cellsOf(mdColumns, res), " | "))
	}
	return b.String()
}
