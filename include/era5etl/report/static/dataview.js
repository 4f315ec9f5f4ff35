/*
 * The Data view's script (served by the plugin as /era5/static/dataview.js, linted by ESLint in the
 * tests: tests/unit/report/test_static_js.py).
 *
 * It fetches /series and /map as JSON, the answers a program gets, and draws them: the series with
 * uPlot (zoom by dragging, values on hover, a break wherever a time step has no row), one chart per
 * variable of the answer, its columns and units taken from the JSON (nothing here names a column);
 * the hour's map as SVG cells. Where consecutive rows are more than one step apart, a null is put at
 * the first missing step, so the line and the min-max band break there instead of joining values
 * across months that were never loaded, and the missing steps are listed under the charts.
 *
 * What a test reads: each chart's figure carries data-variable, data-points (rows answered),
 * data-step and data-gaps; window.era5Data.charts holds the uPlot instances by variable; the map
 * carries data-cells and one rect.gp per grid point (a canvas image past MAX_RECT_CELLS). The page's
 * query string holds the choices (lat, lon, box, step, from, to, time, variable), so a view can be linked.
 *
 * An area instead of a place: the series form's Area field (N/W/S/E), filled by hand or by dragging a
 * box over the map's grid points, asks /series?area=... for the area's series (its points' mean
 * weighted by cos(latitude), their min and max, an accumulation's mean total), drawn as a place's is.
 */
(function () {
  "use strict";

  const cfgNode = document.getElementById("era5-config");
  const seriesForm = document.getElementById("series-form");
  const mapForm = document.getElementById("map-form");
  if (!cfgNode || !seriesForm || !mapForm) return;
  const cfg = JSON.parse(cfgNode.textContent);

  const MAX_RECT_CELLS = 40000;
  const W = 760;
  const HOUR_MS = 3600e3;
  const DAY_MS = 86400e3;
  const AGGREGATES = ["min", "max", "mean", "sum"];
  const LINE = "#dc2626";
  const BAND = "rgba(37, 99, 235, 0.22)";
  const BAR = "#2563eb";
  const PALETTE = ["#313695", "#4575b4", "#74add1", "#abd9e9", "#e0f3f8", "#ffffbf", "#fee090", "#fdae61",
    "#f46d43", "#d73027", "#a50026"];
  const PRECIP_PALETTE = ["#f7fbff", "#c6dbef", "#6baed6", "#2171b5", "#08306b"];
  const STEP_WORDS = {hour: ["hour", "hours", "hourly"], day: ["day", "days", "daily"],
    month: ["month", "months", "monthly"]};
  const charts = {};

  function esc(s) {
    return String(s).replace(/[&<>"']/g, (c) => ({"&": "&amp;", "<": "&lt;", ">": "&gt;", "\"": "&quot;",
      "'": "&#39;"})[c]);
  }
  function query(params) {
    const u = new URLSearchParams();
    Object.keys(params).forEach((k) => {
      const v = params[k];
      if (v !== null && v !== undefined && v !== "") u.set(k, v);
    });
    return u.toString();
  }
  function setStatus(id, text, isError) {
    const node = document.getElementById(id);
    node.textContent = text;
    node.className = "status" + (isError ? " error" : "");
  }
  async function getJSON(url) {
    const r = await fetch(url, {credentials: "same-origin", headers: {"Accept": "application/json"}});
    const text = await r.text();
    let body = null;
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
    if (!r.ok) {
      const d = body && body.detail;
      throw new Error(typeof d === "string" ? d : (r.status + " " + r.statusText));
    }
    return body;
  }
  // A time as the endpoints write it (ISO, UTC), in milliseconds; a time without a zone is UTC.
  function toMs(t) {
    let s = String(t).replace(" ", "T");
    if (/[+-]\d\d$/.test(s)) s += ":00";
    if (/T[\d:.]+$/.test(s)) s += "Z";
    return Date.parse(s);
  }
  function num(v) {
    return (v === null || v === undefined || v === "") ? null : Number(v);
  }
  function fmt(v, digits) {
    if (v === null || v === undefined || !isFinite(v)) return "–";
    const a = Math.abs(v);
    return v.toFixed(digits !== undefined ? digits : (a >= 100 ? 0 : a >= 10 ? 1 : 2));
  }
  function two(n) {
    return (n < 10 ? "0" : "") + n;
  }
  function monthText(ms) {
    const d = new Date(ms);
    return d.getUTCFullYear() + "-" + two(d.getUTCMonth() + 1);
  }
  function dayText(ms) {
    return monthText(ms) + "-" + two(new Date(ms).getUTCDate());
  }
  function hourText(ms) {
    return dayText(ms) + " " + two(new Date(ms).getUTCHours()) + ":00";
  }
  function whenText(ms, step) {
    return step === "hour" ? hourText(ms) + " UTC" : step === "month" ? monthText(ms) : dayText(ms);
  }

  // ---- time steps and the gaps between rows ----
  function nextStep(ms, step) {
    if (step === "month") {
      const d = new Date(ms);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
    }
    return ms + (step === "hour" ? HOUR_MS : DAY_MS);
  }
  function previousStep(ms, step) {
    if (step === "month") {
      const d = new Date(ms);
      return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() - 1, 1);
    }
    return ms - (step === "hour" ? HOUR_MS : DAY_MS);
  }
  function isMonthStart(ms) {
    const d = new Date(ms);
    return d.getUTCDate() === 1 && d.getUTCHours() === 0;
  }
  // The runs of missing steps between the rows: [{first, last}] (both missing, in ms).
  function findGaps(time, step) {
    const out = [];
    for (let i = 1; i < time.length; i++) {
      const expected = nextStep(time[i - 1], step);
      if (time[i] > expected) out.push({first: expected, last: previousStep(time[i], step)});
    }
    return out;
  }
  function gapText(gap, step) {
    let a, b;
    if (isMonthStart(gap.first) && isMonthStart(nextStep(gap.last, step))) {
      a = monthText(gap.first);
      b = monthText(gap.last);
    } else {
      a = whenText(gap.first, step);
      b = whenText(gap.last, step);
    }
    return a === b ? a : a + " to " + b;
  }
  // uPlot's aligned data: x in seconds, one array per column, a null at the first missing step of
  // each gap (uPlot breaks a line, a band and bars at null).
  function withGaps(time, columns, cols, gaps) {
    const x = [];
    const ys = columns.map(() => []);
    let g = 0;
    for (let i = 0; i < time.length; i++) {
      while (g < gaps.length && gaps[g].first < time[i]) {
        x.push(gaps[g].first / 1000);
        ys.forEach((y) => y.push(null));
        g++;
      }
      x.push(time[i] / 1000);
      columns.forEach((c, k) => ys[k].push(cols[c][i]));
    }
    return [x].concat(ys);
  }

  // ---- the answer's columns grouped by variable: temperature_2m_{min,max,mean} are one chart ----
  function variableOf(column, all) {
    for (const agg of AGGREGATES) {
      const suffix = "_" + agg;
      if (column.endsWith(suffix)) {
        const base = column.slice(0, -suffix.length);
        if (all.some((c) => c !== column && c.startsWith(base + "_")) || agg === "sum" || agg === "mean") {
          return {variable: base, role: agg};
        }
      }
    }
    return {variable: column, role: "value"};
  }
  function groupColumns(columns) {
    const groups = [];
    const byName = {};
    columns.forEach((c) => {
      if (c === "hours") return;  // the hours behind each daily or monthly row: not a variable
      const v = variableOf(c, columns);
      if (!byName[v.variable]) {
        byName[v.variable] = {variable: v.variable, columns: {}};
        groups.push(byName[v.variable]);
      }
      byName[v.variable].columns[v.role] = c;
    });
    return groups;
  }

  function chartOptions(group, unit, width, step, bars) {
    const c = group.columns;
    const series = [{value: (u, v) => (v === null ? "–" : whenText(v * 1000, step))}];
    const columns = [];
    const bands = [];
    const shown = (v) => (v === null || v === undefined ? "–" : fmt(v) + " " + unit);
    if (c.min && c.max) {
      columns.push(c.max, c.min);
      series.push({label: "max", stroke: "rgba(37, 99, 235, 0.5)", width: 1, value: (u, v) => shown(v)});
      series.push({label: "min", stroke: "rgba(37, 99, 235, 0.5)", width: 1, value: (u, v) => shown(v)});
      bands.push({series: [1, 2], fill: BAND});
    }
    const main = c.mean || c.sum || c.value;
    if (main) {
      columns.push(main);
      const label = c.mean ? "mean" : c.sum ? "total" : group.variable;
      series.push(bars
        ? {label: label, fill: BAR, stroke: BAR, width: 0, paths: uPlot.paths.bars({size: [0.8, 64]}),
          value: (u, v) => shown(v)}
        : {label: label, stroke: LINE, width: 1.5, value: (u, v) => shown(v)});
    }
    return {
      columns: columns,
      opts: {
        width: width, height: 260, series: series, bands: bands,
        scales: {x: {time: true}},
        axes: [{}, {label: unit, size: 56}],
        cursor: {sync: {key: "era5-series"}},
        legend: {live: true},
      },
    };
  }

  // ", at 500 hPa" after where a table on pressure levels is read; nothing for one without levels.
  function levelText(level) {
    return level ? ", at " + level + " hPa" : "";
  }
  function seriesParams() {
    const f = new FormData(seriesForm);
    const box = String(f.get("box") || "").trim();
    // level: a table on pressure levels only (the form has no level picker otherwise: FormData gives null)
    return {table: cfg.table, lat: box ? null : f.get("lat"), lon: box ? null : f.get("lon"), area: box || null,
      step: f.get("step"), from: f.get("from"), to: f.get("to"), variables: cfg.seriesVariables,
      level: f.get("level")};
  }
  function place(lat, lon) {
    return fmt(Math.abs(lat), 2) + "°" + (lat < 0 ? "S" : "N") + " " + fmt(Math.abs(lon), 2) + "°" +
      (lon < 0 ? "W" : "E");
  }
  function pointText(p) {
    if (!p) return "";
    const km = num(p.distance_km);
    const text = place(num(p.latitude), num(p.longitude));
    if (p.location_id === undefined) return text;
    return text + " (grid point " + p.location_id + (km !== null ? ", " + fmt(km, 1) + " km from the place asked" : "") +
      ")";
  }
  // Where a series is of: the grid point, or the area and how many grid points it averages.
  function whereText(j) {
    if (!j.area) return pointText(j.point);
    const most = Math.max.apply(null, (j.points || [0]).concat([0]));
    return "the area " + j.area + " (" + most.toLocaleString("en") + " grid point" + (most === 1 ? "" : "s") +
      ", mean weighted by cos(latitude))";
  }
  function clearCharts() {
    Object.keys(charts).forEach((k) => {
      charts[k].destroy();
      delete charts[k];
    });
    document.getElementById("series-charts").replaceChildren();
    document.getElementById("series-gaps").textContent = "";
  }

  function drawSeries(j, step) {
    const words = STEP_WORDS[step] || STEP_WORDS.day;
    const time = (j.time || []).map(toMs);
    const cols = {};
    (j.columns || []).forEach((c) => {
      cols[c] = (j.values[c] || []).map(num);
    });
    const gaps = findGaps(time, step);
    const box = document.getElementById("series-charts");
    const where = whereText(j) + levelText(seriesParams().level);
    groupColumns(j.columns || []).forEach((group) => {
      const first = Object.values(group.columns)[0];
      const unit = (j.units || {})[first] || "";
      const bars = (cfg.bars || []).indexOf(group.variable) >= 0;
      const figure = document.createElement("figure");
      figure.className = "series-chart";
      figure.dataset.variable = group.variable;
      figure.dataset.points = String(time.length);
      figure.dataset.step = step;
      figure.dataset.gaps = String(gaps.length);
      const caption = document.createElement("figcaption");
      const kind = group.columns.min && group.columns.max ? " mean with min-max" : group.columns.sum ? " total" : "";
      caption.textContent = group.variable + ", " + words[2] + kind + " (" + unit + ") at " + where;
      figure.appendChild(caption);
      box.appendChild(figure);
      const width = Math.max(320, Math.min(box.clientWidth || W, 900) - 26);
      const o = chartOptions(group, unit, width, step, bars);
      charts[group.variable] = new uPlot(o.opts, withGaps(time, o.columns, cols, gaps), figure);
    });
    if (gaps.length) {
      const list = gaps.map((g) => gapText(g, step));
      document.getElementById("series-gaps").textContent = "No rows (not loaded) for " + list.join(", ") +
        ": the charts break there.";
    }
    return {n: time.length, time: time, words: words};
  }

  async function loadSeries() {
    const p = seriesParams();
    const step = p.step || "day";
    const qs = query(p);
    document.getElementById("series-csv").href = cfg.seriesUrl + "?" + qs + "&format=csv";
    document.getElementById("series-json").href = cfg.seriesUrl + "?" + qs;
    const parquet = document.getElementById("series-parquet");
    parquet.href = cfg.seriesUrl + "?" + qs + "&format=parquet";
    parquet.hidden = Boolean(p.area);  // a file of one place's series; an area's comes as JSON or CSV
    syncLocation();
    setStatus("series-status", "Reading the series…");
    try {
      const j = await getJSON(cfg.seriesUrl + "?" + qs);
      clearCharts();
      const got = drawSeries(j, step);
      const n = got.n;
      const span = n ? ", " + whenText(got.time[0], step) + " to " + whenText(got.time[n - 1], step) : "";
      setStatus("series-status", n.toLocaleString("en") + " " + (n === 1 ? got.words[0] : got.words[1]) + " at " +
        whereText(j) + levelText(p.level) + span);
    } catch (err) {
      setStatus("series-status", err.message, true);
      clearCharts();
    }
  }

  // ---- the map: one SVG cell per grid point ----
  function colour(palette, f) {
    if (!isFinite(f)) return "#e2e8f0";
    f = Math.min(Math.max(f, 0), 1) * (palette.length - 1);
    const i = Math.min(Math.floor(f), palette.length - 2);
    const r = f - i;
    const a = palette[i];
    const b = palette[i + 1];
    let out = "#";
    for (let c = 1; c < 7; c += 2) {
      const v = Math.round(parseInt(a.substr(c, 2), 16) * (1 - r) + parseInt(b.substr(c, 2), 16) * r);
      out += (v < 16 ? "0" : "") + v.toString(16);
    }
    return out;
  }
  function niceTicks(lo, hi, n) {
    if (!isFinite(lo) || !isFinite(hi)) {
      lo = 0;
      hi = 1;
    }
    if (hi - lo < 1e-9) {
      lo -= 1;
      hi += 1;
    }
    const raw = (hi - lo) / n;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw);
    const out = [];
    for (let v = Math.floor(lo / step) * step; v <= Math.ceil(hi / step) * step + step * 1e-6; v += step) {
      out.push(Math.round(v / step) * step);
    }
    return out;
  }
  function extent(values) {
    let lo = Infinity;
    let hi = -Infinity;
    for (const v of values) {
      if (v !== null && isFinite(v)) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    }
    return [lo, hi];
  }
  // An SVG element as text: attributes from an object, text content escaped.
  function el(name, attrs, text) {
    let out = "<" + name;
    Object.keys(attrs).forEach((k) => {
      const v = attrs[k];
      out += " " + k + "=\"" + esc(typeof v === "number" ? +v.toFixed(2) : v) + "\"";
    });
    return out + (text === undefined ? "/>" : ">" + esc(text) + "</" + name + ">");
  }
  function gridStep(values) {
    const u = Array.from(new Set(values.map((v) => Math.round(v * 1000) / 1000)));
    u.sort((a, b) => a - b);
    let best = Infinity;
    for (let i = 1; i < u.length; i++) {
      const d = u[i] - u[i - 1];
      if (d > 1e-6 && d < best) best = d;
    }
    return isFinite(best) ? best : (Number(cfg.grid) || 0.25);
  }
  function mapParams() {
    const f = new FormData(mapForm);
    return {table: cfg.table, time: f.get("time"), variable: f.get("variable"), area: cfg.area,
      level: f.get("level")};
  }
  function drawMap(j, p, unit) {
    const m = {lat: j.latitude.map(Number), lon: j.longitude.map(Number), val: j.values.map(num)};
    const n = m.val.length;
    if (!n) throw new Error("no grid point holds " + p.variable + " at that hour");
    const stepLat = gridStep(m.lat);
    const stepLon = gridStep(m.lon);
    const ext = extent(m.val);
    const lonExt = extent(m.lon);
    const latExt = extent(m.lat);
    const west = lonExt[0] - stepLon / 2;
    const east = lonExt[1] + stepLon / 2;
    const south = latExt[0] - stepLat / 2;
    const north = latExt[1] + stepLat / 2;
    const scale = Math.min((W - 120) / (east - west), 420 / (north - south));
    const mw = (east - west) * scale;
    const mh = (north - south) * scale;
    const ox = 50;
    const oy = 16;
    const palette = /precip|snow/.test(p.variable) ? PRECIP_PALETTE : PALETTE;
    const span = ext[1] - ext[0] || 1;
    const fx = (lon) => ox + (lon - stepLon / 2 - west) * scale;
    const fy = (lat) => oy + (north - lat - stepLat / 2) * scale;
    const body = [];
    const cw = (stepLon * scale).toFixed(2);
    const ch = (stepLat * scale).toFixed(2);
    const fill = (v) => colour(palette, v === null ? NaN : (v - ext[0]) / span);
    if (n <= MAX_RECT_CELLS) {
      for (let i = 0; i < n; i++) {
        body.push("<rect class=\"gp\" data-i=\"" + i + "\" data-lat=\"" + m.lat[i] + "\" data-lon=\"" + m.lon[i] +
          "\" x=\"" + fx(m.lon[i]).toFixed(2) + "\" y=\"" + fy(m.lat[i]).toFixed(2) + "\" width=\"" + cw +
          "\" height=\"" + ch + "\" fill=\"" + fill(m.val[i]) + "\"/>");
      }
    } else {
      const canvas = document.createElement("canvas");
      canvas.width = Math.ceil(mw);
      canvas.height = Math.ceil(mh);
      const g = canvas.getContext("2d");
      for (let k = 0; k < n; k++) {
        g.fillStyle = fill(m.val[k]);
        g.fillRect(fx(m.lon[k]) - ox, fy(m.lat[k]) - oy, stepLon * scale + 0.5, stepLat * scale + 0.5);
      }
      body.push(el("image", {"class": "cells", x: ox, y: oy, width: mw, height: mh, href: canvas.toDataURL()}));
    }
    // Axes in degrees, a colour bar with the range (the highest value at the top), the readout.
    const deg = (t) => +t.toFixed(2) + "°";
    niceTicks(west, east, 5).filter((t) => t >= west && t <= east).forEach((t) => {
      body.push(el("text", {"class": "tick", x: ox + (t - west) * scale, y: oy + mh + 14, "text-anchor": "middle"},
        deg(t)));
    });
    niceTicks(south, north, 4).filter((t) => t >= south && t <= north).forEach((t) => {
      body.push(el("text", {"class": "tick", x: ox - 4, y: oy + (north - t) * scale + 4, "text-anchor": "end"},
        deg(t)));
    });
    const bx = ox + mw + 14;
    const stops = palette.map((c, idx) => el("stop", {offset: idx / (palette.length - 1),
      "stop-color": palette[palette.length - 1 - idx]})).join("");
    body.push("<defs><linearGradient id=\"legend-grad\" x1=\"0\" x2=\"0\" y1=\"0\" y2=\"1\">" + stops +
      "</linearGradient></defs>");
    body.push(el("rect", {x: bx, y: oy, width: 12, height: mh, fill: "url(#legend-grad)"}));
    body.push(el("text", {"class": "tick legend-max", x: bx + 16, y: oy + 10}, fmt(ext[1]) + " " + unit));
    body.push(el("text", {"class": "tick legend-min", x: bx + 16, y: oy + mh}, fmt(ext[0]) + " " + unit));
    body.push(el("text", {"class": "readout", x: ox, y: oy + mh + 32}, ""));
    const label = p.variable + levelText(p.level) + " at " + String(j.time || p.time).replace("T", " ").slice(0, 16) +
      " UTC";
    const box = document.getElementById("map-chart");
    box.innerHTML = "<svg class=\"chart map\" viewBox=\"0 0 " + (bx + 80).toFixed(0) + " " +
      (mh + oy + 40).toFixed(0) + "\" role=\"img\" aria-label=\"" + esc(label) + "\" data-cells=\"" + n +
      "\" data-variable=\"" + esc(p.variable) + "\" xmlns=\"http://www.w3.org/2000/svg\">" + el("title", {}, label) +
      body.join("") + "</svg>";
    document.getElementById("map-caption").textContent = label + " (" + unit + "), " + n.toLocaleString("en") +
      " grid points";
    setStatus("map-status", n.toLocaleString("en") + " grid points, " + fmt(ext[0]) + " to " + fmt(ext[1]) + " " +
      unit);
    const svg = box.querySelector("svg");
    const readout = svg.querySelector(".readout");
    // The pointer in the SVG's units, and where that is in degrees.
    function svgXY(ev) {
      const ctm = svg.getScreenCTM();
      if (!ctm) return null;
      const x = (ev.clientX - ctm.e) / ctm.a;
      const y = (ev.clientY - ctm.f) / ctm.d;
      return {x: x, y: y, lon: west + (x - ox) / scale, lat: north - (y - oy) / scale};
    }
    function cellAt(ev) {
      const at = svgXY(ev);
      if (!at) return -1;
      const lon = at.lon;
      const lat = at.lat;
      let best = -1;
      let bd = Infinity;
      for (let q = 0; q < n; q++) {
        const dl = Math.abs(m.lon[q] - lon) / stepLon;
        const dt = Math.abs(m.lat[q] - lat) / stepLat;
        if (dl <= 0.5 && dt <= 0.5 && dl + dt < bd) {
          bd = dl + dt;
          best = q;
        }
      }
      return best;
    }
    // Dragging draws a box; the grid points whose centres it holds are the area of the series.
    let drag = null;
    let dragged = false;
    const NS = "http://www.w3.org/2000/svg";
    svg.addEventListener("mousedown", (ev) => {
      const at = svgXY(ev);
      dragged = false;
      if (!at || ev.button !== 0) return;
      ev.preventDefault();
      const rect = document.createElementNS(NS, "rect");
      rect.setAttribute("class", "boxsel");
      svg.appendChild(rect);
      drag = {from: at, rect: rect};
      // The button may be let go outside the map: the drag ends wherever it is.
      window.addEventListener("mouseup", endDrag, {once: true});
    });
    function dragBox(at) {
      const x = Math.min(drag.from.x, at.x);
      const y = Math.min(drag.from.y, at.y);
      drag.rect.setAttribute("x", x.toFixed(2));
      drag.rect.setAttribute("y", y.toFixed(2));
      drag.rect.setAttribute("width", Math.abs(at.x - drag.from.x).toFixed(2));
      drag.rect.setAttribute("height", Math.abs(at.y - drag.from.y).toFixed(2));
    }
    function pickArea(from, to) {
      const lon0 = Math.min(from.lon, to.lon);
      const lon1 = Math.max(from.lon, to.lon);
      const lat0 = Math.min(from.lat, to.lat);
      const lat1 = Math.max(from.lat, to.lat);
      const inside = [];
      for (let q = 0; q < n; q++) {
        if (m.lon[q] >= lon0 && m.lon[q] <= lon1 && m.lat[q] >= lat0 && m.lat[q] <= lat1) inside.push(q);
      }
      svg.querySelectorAll(".gp.sel").forEach((c) => c.classList.remove("sel"));
      if (!inside.length) {
        setStatus("series-status", "The box holds no grid point's centre: drag over the cells of the area", true);
        return;
      }
      const lats = extent(inside.map((q) => m.lat[q]));
      const lons = extent(inside.map((q) => m.lon[q]));
      const text = [lats[1], lons[0], lats[0], lons[1]].map((v) => String(+v.toFixed(4))).join("/");
      inside.forEach((q) => {
        const cell = svg.querySelector(".gp[data-i=\"" + q + "\"]");
        if (cell) cell.classList.add("sel");
      });
      seriesForm.elements.box.value = text;
      loadSeries();
      document.getElementById("series").scrollIntoView({behavior: "smooth"});
    }
    function endDrag(ev) {
      if (!drag) return;
      const at = svgXY(ev) || drag.from;
      const from = drag.from;
      drag.rect.remove();
      drag = null;
      dragged = Math.abs(at.x - from.x) + Math.abs(at.y - from.y) > 6;
      if (dragged) pickArea(from, at);
    }
    svg.addEventListener("mousemove", (ev) => {
      if (drag) {
        const at = svgXY(ev);
        if (at) dragBox(at);
      }
      const q = cellAt(ev);
      readout.textContent = q < 0 ? "" : place(m.lat[q], m.lon[q]) + ": " + fmt(m.val[q]) + " " + unit +
        " (click: its series; drag: an area's)";
    });
    svg.addEventListener("click", (ev) => {
      if (dragged) {
        dragged = false;  // the end of a drag, not a click on a point
        return;
      }
      const q = cellAt(ev);
      if (q < 0) return;
      seriesForm.elements.box.value = "";
      seriesForm.elements.lat.value = m.lat[q];
      seriesForm.elements.lon.value = m.lon[q];
      svg.querySelectorAll(".gp.sel").forEach((c) => c.classList.remove("sel"));
      const cell = svg.querySelector(".gp[data-i=\"" + q + "\"]");
      if (cell) cell.classList.add("sel");
      loadSeries();
      document.getElementById("series").scrollIntoView({behavior: "smooth"});
    });
  }
  async function loadMap() {
    const p = mapParams();
    const qs = query(p);
    const unit = (cfg.units || {})[p.variable] || "";
    document.getElementById("map-csv").href = cfg.mapUrl + "?" + qs + "&format=csv";
    document.getElementById("map-json").href = cfg.mapUrl + "?" + qs;
    syncLocation();
    setStatus("map-status", "Reading the hour…");
    try {
      drawMap(await getJSON(cfg.mapUrl + "?" + qs), p, unit);
    } catch (err) {
      setStatus("map-status", err.message, true);
      document.getElementById("map-chart").innerHTML = "";
    }
  }

  // The choices live in the page's query string too, so a view can be linked to and reloaded.
  function syncLocation() {
    const s = seriesParams();
    const mp = mapParams();
    const qs = query({table: cfg.table, area: cfg.area, lat: s.lat, lon: s.lon, box: s.area, step: s.step,
      from: s.from, to: s.to, time: mp.time, variable: mp.variable, level: s.level});
    try {
      history.replaceState(null, "", location.pathname + "?" + qs);
    } catch {
      // a sandboxed frame may not rewrite its address: the view still works
    }
  }
  function restore() {
    const u = new URLSearchParams(location.search);
    ["lat", "lon", "box", "step", "from", "to"].forEach((k) => {
      if (u.get(k)) seriesForm.elements[k].value = u.get(k);
    });
    ["time", "variable"].forEach((k) => {
      if (u.get(k)) mapForm.elements[k].value = u.get(k);
    });
  }

  seriesForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    loadSeries();
  });
  mapForm.addEventListener("submit", (ev) => {
    ev.preventDefault();
    loadMap();
  });
  restore();
  window.era5Data = {loadSeries: loadSeries, loadMap: loadMap, charts: charts, findGaps: findGaps};
  loadSeries();
  loadMap();
})();
