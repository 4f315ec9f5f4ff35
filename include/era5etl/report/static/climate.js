// The Data view's Climate panel: a place's (or an area's, or a region's) yearly anomalies against a baseline, drawn
// as SVG bars with the OLS trend line, from the JSON of /era5/climate (the same object as
// `python -m era5etl climate --json`). Partial years have no bar and are named under the chart.
(function () {
  "use strict";

  const cfg = JSON.parse(document.getElementById("era5-config").textContent);
  const form = document.getElementById("climate-form");
  if (!form) return;
  const chart = document.getElementById("climate-chart");
  const status = document.getElementById("climate-status");
  const summary = document.getElementById("climate-summary");
  const jsonLink = document.getElementById("climate-json");
  const SVG = "http://www.w3.org/2000/svg";
  window.era5Climate = { data: null };

  function params() {
    const f = new FormData(form);
    const p = { table: cfg.table || "", variable: f.get("variable"), baseline: f.get("baseline") };
    const box = String(f.get("box") || "").trim();
    const region = String(f.get("region") || "").trim();
    if (region) p.region = region;
    else if (box) p.area = box;
    else {
      p.place = String(f.get("place") || "").trim();
      const country = String(f.get("country") || "").trim();
      if (country) p.country = country;
    }
    return p;
  }

  function url(p) {
    const q = Object.keys(p).filter((k) => p[k] !== "").map((k) => encodeURIComponent(k) + "=" +
      encodeURIComponent(p[k]));
    return cfg.climateUrl + "?" + q.join("&");
  }

  function node(name, attrs, text) {
    const e = document.createElementNS(SVG, name);
    Object.keys(attrs).forEach((k) => e.setAttribute(k, attrs[k]));
    if (text !== undefined) e.textContent = text;
    return e;
  }

  function signed(v, digits) {
    return (v >= 0 ? "+" : "") + v.toFixed(digits);
  }

  function draw(j) {
    chart.textContent = "";
    const years = j.years.filter((r) => r.anomaly !== null);
    const w = 900, h = 260, left = 56, right = 12, top = 12, bottom = 28;
    const first = j.years[0].year, last = j.years[j.years.length - 1].year;
    const span = Math.max(1, last - first + 1);
    const peak = Math.max(1e-9, ...years.map((r) => Math.abs(r.anomaly)));
    const x = (year) => left + (year - first) * (w - left - right) / span;
    const y = (v) => top + (h - top - bottom) / 2 * (1 - v / peak);
    const svg = node("svg", { viewBox: "0 0 " + w + " " + h, width: w, height: h, role: "img",
      "aria-label": "yearly anomalies of " + j.variable });
    svg.appendChild(node("line", { x1: left, x2: w - right, y1: y(0), y2: y(0), class: "axis" }));
    const bw = Math.max(1, (w - left - right) / span - 1);
    years.forEach((r) => {
      const top0 = Math.min(y(r.anomaly), y(0));
      const rect = node("rect", { x: x(r.year).toFixed(2), y: top0.toFixed(2), width: bw.toFixed(2),
        height: Math.max(0.5, Math.abs(y(r.anomaly) - y(0))).toFixed(2),
        class: "bar " + (r.anomaly >= 0 ? "above" : "below"), "data-year": r.year, "data-anomaly": r.anomaly });
      rect.appendChild(node("title", {}, r.year + ": " + signed(r.anomaly, 3) + " " + j.unit));
      svg.appendChild(rect);
    });
    const t = j.trend_per_decade;
    if (t.ols !== null && years.length) {
      const xs = years.map((r) => r.year), ys = years.map((r) => r.anomaly);
      const mx = xs.reduce((a, b) => a + b, 0) / xs.length, my = ys.reduce((a, b) => a + b, 0) / ys.length;
      const at = (year) => my + t.ols / 10 * (year - mx);
      const a = xs[0], b = xs[xs.length - 1];
      svg.appendChild(node("line", { x1: x(a) + bw / 2, x2: x(b) + bw / 2, y1: y(at(a)), y2: y(at(b)),
        class: "trend", "data-ols": t.ols }));
    }
    [first, Math.round((first + last) / 2), last].forEach((year) => {
      svg.appendChild(node("text", { x: x(year), y: h - 8, class: "tick" }, String(year)));
    });
    svg.appendChild(node("text", { x: 4, y: y(peak) + 4, class: "tick" }, signed(peak, 3)));
    svg.appendChild(node("text", { x: 4, y: y(-peak), class: "tick" }, signed(-peak, 3)));
    chart.appendChild(svg);
    chart.setAttribute("data-bars", String(years.length));
  }

  function describe(j) {
    const where = (j.place || j.point || j.region || j.area).described;
    const t = j.trend_per_decade;
    const trend = t.ols === null ? "no trend (fewer than 3 complete years)" :
      "trend " + signed(t.ols, 4) + " " + j.unit + " per decade (95%: " + signed(t.ci95[0], 4) + " to " +
      signed(t.ci95[1], 4) + "; Theil-Sen " + signed(t.theil_sen, 4) + ")";
    const top = j.highest.length ? "; highest " + j.highest[0].year + ", lowest " + j.lowest[0].year : "";
    const partial = j.years.filter((r) => r.partial).map((r) => r.year);
    return where + ". " + j.statistic + " " + j.variable + " against " + j.baseline.join("-") + ": " + trend + top +
      (partial.length ? ". Partial years, no bar: " + partial.join(", ") : "") + ".";
  }

  async function load(ev) {
    if (ev) ev.preventDefault();
    const p = params();
    jsonLink.href = url(p);
    status.textContent = "Loading…";
    status.classList.remove("error");
    try {
      const r = await fetch(url(p), { credentials: "same-origin" });
      const j = await r.json();
      if (!r.ok) throw new Error(j.detail || r.statusText);
      window.era5Climate.data = j;
      draw(j);
      summary.textContent = describe(j);
      status.textContent = j.years.length + " years";
    } catch (e) {
      chart.textContent = "";
      summary.textContent = "";
      status.textContent = String(e.message || e);
      status.classList.add("error");
    }
  }

  form.addEventListener("submit", load);
})();
