"""The dashboard's one HTML page: a table per application and the plots, refreshed by a few
lines of inline script from /api/state every second. Nothing is fetched from anywhere but the
dashboard itself. Cells have ids `APP-COLUMN` (e.g. `nhttpd-w_us`) for tests and scripts."""
import json

from dashboard.collector import METRICS

# Table columns: key in a row -> heading.
COLUMNS = [("id", "id"), ("state", "state"), ("price", "price $/Gbit"), ("w_us", "W us"),
           ("utility", "utility"), ("adaptive", "adaptive W"), ("load_class", "load"),
           ("throughput", "throughput /s"), ("latency_us", "latency us (mean)"),
           ("latency_p99_us", "p99 us (since start)"), ("exits_per_s", "exits /s"),
           ("profit", "profit u$/s"), ("cores", "cores"), ("mem_mib", "memory MiB")]

PAGE = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>nom dashboard</title>
<style>
body { font-family: sans-serif; margin: 1em; }
table { border-collapse: collapse; margin-bottom: 1em; }
th, td { border: 1px solid #ccc; padding: 3px 8px; text-align: right; }
th:first-child, td:first-child { text-align: left; }
.err { color: #b00; }
img { margin: 0 8px 8px 0; border: 1px solid #eee; }
</style></head>
<body>
<h1>nom: applications, live</h1>
<p>Published bandwidth price: <b id="price">-</b> $/Gbit (sequence <span id="sequence">-</span>);
last poll <span id="updated">-</span>, <span id="polls">0</span> polls.
<span class="err" id="errors"></span></p>
<table><thead><tr><th>application</th>__HEADINGS__</tr></thead><tbody id="rows"></tbody></table>
<div id="plots">__PLOTS__</div>
<p>Rates are over one poll; exits are the kicks and interrupts the applications count (under
TCG events, not VM exits). The dashboard's own two requests a poll count in nhttpd's
throughput.</p>
<script>
const COLUMNS = __COLUMNS__;
function show(v) {
  if (v === null || v === undefined) return "";
  if (typeof v !== "number") return String(v);
  return Number.isInteger(v) ? String(v) : v.toFixed(Math.abs(v) < 10 ? 3 : 1);
}
function render(s) {
  document.getElementById("price").textContent = show(s.price);
  document.getElementById("sequence").textContent = show(s.price_sequence);
  document.getElementById("polls").textContent = show(s.polls);
  const updated = s.time ? new Date(s.time * 1000).toISOString() : "-";
  document.getElementById("updated").textContent = updated;
  const errors = Object.entries(s.errors).map(([app, e]) => app + ": " + e);
  document.getElementById("errors").textContent = errors.join("; ");
  const body = document.getElementById("rows");
  body.replaceChildren();
  for (const [name, row] of Object.entries(s.apps)) {
    const tr = document.createElement("tr");
    const th = document.createElement("td");
    th.textContent = name;
    tr.appendChild(th);
    for (const key of COLUMNS) {
      const td = document.createElement("td");
      td.id = name + "-" + key;
      td.textContent = show(row[key]);
      tr.appendChild(td);
    }
    body.appendChild(tr);
  }
  for (const img of document.querySelectorAll("#plots img"))
    img.src = "/plot/" + img.dataset.metric + ".svg?t=" + Date.now();
}
async function refresh() {
  try {
    const r = await fetch("/api/state", {cache: "no-store"});
    render(await r.json());
  } catch (e) {
    document.getElementById("errors").textContent = "dashboard unreachable: " + e;
  }
}
refresh();
setInterval(refresh, 1000);
</script>
</body></html>
"""


def html():
    headings = "".join(f"<th>{title}</th>" for _, title in COLUMNS)
    plots = "".join(f'<img data-metric="{m}" alt="{title}" src="/plot/{m}.svg">'
                    for m, (title, _) in METRICS.items())
    return (PAGE.replace("__HEADINGS__", headings).replace("__PLOTS__", plots)
            .replace("__COLUMNS__", json.dumps([key for key, _ in COLUMNS])))
