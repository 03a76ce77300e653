package main

import "html/template"

// reportNotes explain what a reader might misread in a report's table.
var reportNotes = map[string]string{
	"brief": "Prefix hit is the same for every policy here: with two endpoints whose KV caches hold every shared " +
		"prefix after its first use on each, any policy reaches the workload's upper bound. kv wins on where the " +
		"work goes (a request lands where its uncached prefill is cheapest), not on how many prefixes hit.",
	"brief-import": "The same load plus 30 unrelated 12,000-token documents arriving within 5 seconds at t = 120 s. " +
		"The figure shows prompt tokens waiting for prefill around that burst: kv (whose defaults queue) and " +
		"kv+queue hold the surge in the picker's queue instead of the engines', where short requests pass the documents.",
}

var pageTemplate = template.Must(template.New("index").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>kvpick: routing comparison</title>
<style>
body { font-family: sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }
table { border-collapse: collapse; margin: 1em 0; font-size: 14px; }
th, td { padding: 4px 10px; border-bottom: 1px solid #ddd; text-align: right; }
th:first-child, td:first-child { text-align: left; }
tr.kv { background: #fde8d8; font-weight: bold; }
img { width: 100%; max-width: 1100px; display: block; margin: 1em 0; border: 1px solid #eee; }
pre { background: #f6f6f6; padding: 1em; white-space: pre-wrap; font-size: 13px; }
.headline { font-weight: bold; }
.verdict { background: #fde8d8; padding: 0.6em 1em; font-weight: bold; }
.note { max-width: 60em; }
</style></head>
<body>
<h1>kvpick: routing policies compared</h1>
<p class="note">Each table row is one routing policy replayed on the same simulated fleet and workload
(routebench, virtual time). TTFT includes queueing. The kv row is kvpick's default mode.</p>
{{if .Verdict}}<p class="verdict">Live fleet on loopback, {{.Verdict}} (details at the end)</p>{{end}}
{{range .Reports}}
<section id="{{.Name}}">
<h2>{{.Title}}</h2>
<p>{{.Workload}}</p>
{{if .Headline}}<p class="headline">{{.Headline}}</p>{{end}}
<table>
<tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{range .Rows}}<tr{{if .Highlight}} class="kv"{{end}}>{{range .Cells}}<td>{{.}}</td>{{end}}</tr>
{{end}}</table>
{{if .Note}}<p class="note">{{.Note}}</p>{{end}}
{{range .Figures}}<img src="{{.}}" alt="{{.}}">
{{end}}</section>
{{end}}
{{if .Live}}<section id="live"><h2>Live fleet on loopback (modelsim, kvpick, gatewaysim)</h2>
<pre>{{.Live}}</pre>{{if .Verdict}}<p class="verdict">{{.Verdict}}</p>{{end}}</section>{{end}}
<script>
// Records, once everything loaded, how many images rendered: make e2e's browser check reads these.
window.addEventListener('load', function () {
  var imgs = document.images, missing = 0;
  for (var i = 0; i < imgs.length; i++) { if (!imgs[i].complete || imgs[i].naturalWidth === 0) { missing++; } }
  document.body.setAttribute('data-images', String(imgs.length));
  document.body.setAttribute('data-missing-images', String(missing));
});
</script>
</body></html>
`))
