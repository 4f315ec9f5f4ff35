'''The Data view's script: fetches ``/series`` and ``/map`` as JSON and draws them as inline SVG.

Plain JavaScript, no library (the machine serving it may have no internet, and nothing large is
vendored). Each chart marks what it drew so a test can count it: the series charts carry
``data-points`` (time steps answered) and draw one polyline vertex per value and one bar (one ``M``
of the bars' path) per value; the map carries ``data-cells`` and draws one ``rect.gp`` per grid
point (up to :data:`MAX_RECT_CELLS`; a larger map is painted on a canvas and embedded as an image).
The page's own query string holds the choices (``lat``, ``lon``, ``step``, ``from``, ``to``,
``time``, ``variable``), so a view can be linked to.
'''

MAX_RECT_CELLS = 40_000

SCRIPT = r"""
(function () {
  "use strict";
  var cfg = JSON.parse(document.getElementById("era5-config").textContent);
  var MAX_RECT_CELLS = %MAX_RECT_CELLS%;
  var W = 760, H = 260, PL = 58, PR = 16, PT = 22, PB = 40;
  var HOUR_MS = 3600e3, DAY_MS = 86400e3;
  var PALETTE = ["#313695", "#4575b4", "#74add1", "#abd9e9", "#e0f3f8", "#ffffbf", "#fee090", "#fdae61",
                 "#f46d43", "#d73027", "#a50026"];
  var PRECIP_PALETTE = ["#f7fbff", "#c6dbef", "#6baed6", "#2171b5", "#08306b"];
  var seriesForm = document.getElementById("series-form");
  var mapForm = document.getElementById("map-form");

  function esc(s) {
    return String(s).replace(/[&<>"']/g, function (c) {
      return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"}[c];
    });
  }
  function query(params) {
    var u = new URLSearchParams();
    Object.keys(params).forEach(function (k) {
      var v = params[k];
      if (v !== null && v !== undefined && v !== "") u.set(k, v);
    });
    return u.toString();
  }
  function status(id, text, isError) {
    var node = document.getElementById(id);
    node.textContent = text;
    node.className = "status" + (isError ? " error" : "");
  }
  function getJSON(url) {
    return fetch(url, {credentials: "same-origin", headers: {"Accept": "application/json"}}).then(function (r) {
      return r.text().then(function (text) {
        var body = null;
        try { body = JSON.parse(text); } catch (e) { body = null; }
        if (!r.ok) {
          var d = body && body.detail;
          throw new Error(typeof d === "string" ? d : (r.status + " " + r.statusText));
        }
        return body;
      });
    });
  }
  // A time as the endpoints write it, in milliseconds; a time without a zone is UTC.
  function toMs(t) {
    if (typeof t === "number") return t;
    var s = String(t).replace(" ", "T");
    if (/[+-]\d\d$/.test(s)) s += ":00";
    if (/T[\d:.]+$/.test(s)) s += "Z";
    return Date.parse(s);
  }
  function num(v) { return (v === null || v === undefined || v === "") ? NaN : Number(v); }
  function fmt(v, digits) {
    if (!isFinite(v)) return "–";
    var a = Math.abs(v);
    return v.toFixed(digits !== undefined ? digits : (a >= 100 ? 0 : a >= 10 ? 1 : 2));
  }
  function two(n) { return (n < 10 ? "0" : "") + n; }
  function dayText(ms) {
    var d = new Date(ms);
    return d.getUTCFullYear() + "-" + two(d.getUTCMonth() + 1) + "-" + two(d.getUTCDate());
  }
  function hourText(ms) { return dayText(ms) + " " + two(new Date(ms).getUTCHours()) + ":00"; }

  // ---- the endpoints' JSON as columns ----
  function columnsOf(j) {
    // {time: [...], values: {col: [...]}} or {time: [...], col: [...]} or {rows/data: [{time, col...}]}
    var out = {};
    var times = j.time || j.times;
    if (Array.isArray(times)) {
      var vals = (j.values && !Array.isArray(j.values)) ? j.values : j;
      Object.keys(vals).forEach(function (k) {
        if (Array.isArray(vals[k]) && vals[k].length === times.length && k !== "time" && k !== "times") {
          out[k] = vals[k].map(num);
        }
      });
      return {time: times.map(toMs), cols: out};
    }
    var rows = j.rows || j.data || [];
    var t = [];
    rows.forEach(function (r) {
      t.push(toMs(r.time !== undefined ? r.time : r.bucket));
      Object.keys(r).forEach(function (k) {
        if (k === "time" || k === "bucket") return;
        (out[k] = out[k] || []).push(num(r[k]));
      });
    });
    return {time: t, cols: out};
  }
  function pick(cols, names) {
    for (var i = 0; i < names.length; i++) if (cols[names[i]]) return {name: names[i], values: cols[names[i]]};
    return null;
  }
  function mapOf(j) {
    if (Array.isArray(j.latitude) && Array.isArray(j.values)) {
      return {lat: j.latitude.map(Number), lon: j.longitude.map(Number), val: j.values.map(num)};
    }
    var cells = j.cells || j.points || j.rows || j.data || [];
    return {lat: cells.map(function (c) { return Number(c.latitude); }),
            lon: cells.map(function (c) { return Number(c.longitude); }),
            val: cells.map(function (c) { return num(c.value !== undefined ? c.value : c[j.variable]); })};
  }

  // ---- scales and axes ----
  function niceTicks(lo, hi, n) {
    if (!isFinite(lo) || !isFinite(hi)) { lo = 0; hi = 1; }
    if (hi - lo < 1e-9) { lo -= 1; hi += 1; }
    var raw = (hi - lo) / n, mag = Math.pow(10, Math.floor(Math.log10(raw)));
    var step = [1, 2, 2.5, 5, 10].map(function (m) { return m * mag; }).find(function (s) { return s >= raw; });
    var out = [];
    for (var v = Math.floor(lo / step) * step; v <= Math.ceil(hi / step) * step + step * 1e-6; v += step) {
      out.push(Math.round(v / step) * step);
    }
    return out;
  }
  var TIME_STEPS = [[1, "h"], [3, "h"], [6, "h"], [12, "h"], [1, "d"], [2, "d"], [7, "d"], [14, "d"], [1, "m"],
                    [2, "m"], [3, "m"], [6, "m"], [1, "y"], [2, "y"], [5, "y"], [10, "y"], [20, "y"], [50, "y"]];
  function unitMs(k, u) {
    return k * (u === "h" ? HOUR_MS : u === "d" ? DAY_MS : u === "m" ? 30.44 * DAY_MS : 365.25 * DAY_MS);
  }
  function timeTicks(lo, hi, n) {
    var want = (hi - lo) / n, chosen = TIME_STEPS[TIME_STEPS.length - 1];
    for (var i = 0; i < TIME_STEPS.length; i++) {
      if (unitMs(TIME_STEPS[i][0], TIME_STEPS[i][1]) >= want) { chosen = TIME_STEPS[i]; break; }
    }
    var k = chosen[0], u = chosen[1], d = new Date(lo);
    var y = d.getUTCFullYear(), m = d.getUTCMonth(), day = d.getUTCDate(), h = d.getUTCHours();
    if (u === "y") { y = Math.floor(y / k) * k; m = 0; day = 1; h = 0; }
    else if (u === "m") { m = Math.floor(m / k) * k; day = 1; h = 0; }
    else if (u === "d") { h = 0; }
    else { h = Math.floor(h / k) * k; }
    var out = [];
    for (var j = 0; j < 500; j++) {
      var t = Date.UTC(y, m, day, h);
      if (t > hi) break;
      if (t >= lo) out.push(t);
      if (u === "y") y += k; else if (u === "m") m += k; else if (u === "d") day += k; else h += k;
    }
    var label = u === "y" ? function (t) { return String(new Date(t).getUTCFullYear()); }
      : u === "m" ? function (t) { return dayText(t).slice(0, 7); }
      : u === "d" ? function (t) { return dayText(t).slice(5); }
      : function (t) { return hourText(t).slice(5); };
    return {ticks: out, label: label};
  }
  // An SVG element as text: attributes from an object, text content escaped.
  function el(name, attrs, text) {
    var out = "<" + name;
    Object.keys(attrs).forEach(function (k) {
      var v = attrs[k];
      out += " " + k + '="' + esc(typeof v === "number" ? +v.toFixed(2) : v) + '"';
    });
    return out + (text === undefined ? "/>" : ">" + esc(text) + "</" + name + ">");
  }
  function frame(ticks, yOf, xTicks, xOf, yLabel, xLabel) {
    var out = [], plotH = H - PT - PB, mid = PT + plotH / 2;
    ticks.forEach(function (t) {
      var y = yOf(t);
      out.push(el("line", {"class": "grid", x1: PL, x2: W - PR, y1: y, y2: y}));
      out.push(el("text", {"class": "tick", x: PL - 6, y: y + 4, "text-anchor": "end"}, fmt(t)));
    });
    xTicks.ticks.forEach(function (t) {
      out.push(el("text", {"class": "tick", x: xOf(t), y: PT + plotH + 16, "text-anchor": "middle"}, xTicks.label(t)));
    });
    out.push(el("line", {"class": "base", x1: PL, x2: W - PR, y1: PT + plotH, y2: PT + plotH}));
    out.push(el("text", {"class": "axis", x: 14, y: mid, transform: "rotate(-90 14 " + mid + ")",
                         "text-anchor": "middle"}, yLabel));
    out.push(el("text", {"class": "axis", x: PL + (W - PL - PR) / 2, y: H - 4, "text-anchor": "middle"}, xLabel));
    return out;
  }
  function extent(arrays) {
    var lo = Infinity, hi = -Infinity;
    arrays.forEach(function (a) {
      if (!a) return;
      for (var i = 0; i < a.length; i++) { var v = a[i]; if (isFinite(v)) { if (v < lo) lo = v; if (v > hi) hi = v; } }
    });
    return [lo, hi];
  }
  function xScale(time) {
    var t0 = time[0], t1 = time[time.length - 1], plotW = W - PL - PR, inner = plotW - 8;
    return function (t) { return t1 > t0 ? PL + 4 + inner * (t - t0) / (t1 - t0) : PL + plotW / 2; };
  }
  function svgOpen(cls, label, n, extra) {
    return '<svg class="chart series ' + cls + '" viewBox="0 0 ' + W + " " + H + '" role="img" aria-label="' +
      esc(label) + '" data-points="' + n + '"' + (extra || "") + ' xmlns="http://www.w3.org/2000/svg">' +
      el("title", {}, label);
  }

  // A line (broken where a value is missing), with a min-max band for daily and monthly steps.
  function lineChart(time, main, band, label, yLabel, xLabel, step) {
    var n = time.length, ext = extent([main.values].concat(band ? [band.lo, band.hi] : []));
    var ticks = niceTicks(ext[0], ext[1], 4), top = ticks[ticks.length - 1], bottom = ticks[0];
    var plotH = H - PT - PB, xOf = xScale(time);
    function yOf(v) { return PT + plotH * (1 - (v - bottom) / (top - bottom)); }
    var body = frame(ticks, yOf, timeTicks(time[0], time[n - 1] || time[0], 7), xOf, yLabel, xLabel);
    if (band) {
      var upper = [], lower = [];
      var flush = function () {
        if (upper.length) body.push('<path class="band" d="M' + upper.concat(lower.reverse()).join("L") + 'Z"/>');
        upper = []; lower = [];
      };
      for (var i = 0; i < n; i++) {
        if (isFinite(band.lo[i]) && isFinite(band.hi[i])) {
          var x = xOf(time[i]).toFixed(1);
          upper.push(x + "," + yOf(band.hi[i]).toFixed(1));
          lower.push(x + "," + yOf(band.lo[i]).toFixed(1));
        } else { flush(); }
      }
      flush();
    }
    var seg = [], drawn = 0;
    var end = function () {
      if (seg.length) body.push('<polyline class="line temp" points="' + seg.join(" ") + '"/>');
      seg = [];
    };
    for (var k = 0; k < n; k++) {
      var v = main.values[k];
      if (isFinite(v)) { seg.push(xOf(time[k]).toFixed(2) + "," + yOf(v).toFixed(1)); drawn++; } else { end(); }
    }
    end();
    return svgOpen("temp", label, n, ' data-drawn="' + drawn + '" data-step="' + step + '"') + body.join("") +
      '<line class="cursor" x1="-10" x2="-10" y1="' + PT + '" y2="' + (PT + plotH) + '"/>' +
      '<text class="readout" x="' + (W - PR) + '" y="14" text-anchor="end"></text></svg>';
  }

  // One bar per time step, all in one path: one "M" per bar.
  function barChart(time, values, label, yLabel, xLabel, step) {
    var n = time.length, ext = extent([values]);
    var ticks = niceTicks(Math.min(0, ext[0]), Math.max(ext[1], 0.1), 4);
    var top = ticks[ticks.length - 1], bottom = ticks[0];
    var plotH = H - PT - PB, xOf = xScale(time), plotW = W - PL - PR;
    function yOf(v) { return PT + plotH * (1 - (v - bottom) / (top - bottom)); }
    var width = Math.max(plotW / Math.max(n, 1) * 0.8, 0.3), zero = yOf(0), d = [], drawn = 0;
    for (var i = 0; i < n; i++) {
      var v = values[i];
      if (!isFinite(v)) continue;
      var y = yOf(v), x = xOf(time[i]) - width / 2;
      d.push("M" + x.toFixed(2) + "," + Math.min(y, zero).toFixed(2) + "h" + width.toFixed(2) +
             "V" + Math.max(y, zero).toFixed(2) + "H" + x.toFixed(2) + "Z");
      drawn++;
    }
    var body = frame(ticks, yOf, timeTicks(time[0], time[n - 1] || time[0], 7), xOf, yLabel, xLabel);
    return svgOpen("precip", label, n, ' data-drawn="' + drawn + '" data-step="' + step + '"') + body.join("") +
      '<path class="bars" d="' + d.join("") + '"/>' +
      '<line class="cursor" x1="-10" x2="-10" y1="' + PT + '" y2="' + (PT + plotH) + '"/>' +
      '<text class="readout" x="' + (W - PR) + '" y="14" text-anchor="end"></text></svg>';
  }

  // The value under the pointer, read out at the chart's top right.
  function hover(container, time, cols, unit, step) {
    var svg = container.querySelector("svg");
    if (!svg || !time.length) return;
    var xOf = xScale(time), cursor = svg.querySelector(".cursor"), readout = svg.querySelector(".readout");
    svg.addEventListener("mousemove", function (ev) {
      var ctm = svg.getScreenCTM();
      if (!ctm) return;
      var x = (ev.clientX - ctm.e) / ctm.a, lo = 0, hi = time.length - 1;
      while (hi - lo > 1) { var mid = (lo + hi) >> 1; if (xOf(time[mid]) < x) lo = mid; else hi = mid; }
      var i = Math.abs(xOf(time[lo]) - x) <= Math.abs(xOf(time[hi]) - x) ? lo : hi;
      cursor.setAttribute("x1", xOf(time[i])); cursor.setAttribute("x2", xOf(time[i]));
      var when = step === "hour" ? hourText(time[i]) + " UTC"
        : step === "month" ? dayText(time[i]).slice(0, 7) : dayText(time[i]);
      var parts = cols.map(function (c) { return (c[0] ? c[0] + " " : "") + fmt(c[1][i]); });
      readout.textContent = when + ": " + parts.join(", ") + " " + unit;
    });
    svg.addEventListener("mouseleave", function () {
      cursor.setAttribute("x1", -10); cursor.setAttribute("x2", -10); readout.textContent = "";
    });
  }

  var STEP_WORDS = {hour: ["hour", "hours", "hourly"], day: ["day", "days", "daily"],
                    month: ["month", "months", "monthly"]};

  function seriesParams() {
    var f = new FormData(seriesForm);
    return {table: cfg.table, lat: f.get("lat"), lon: f.get("lon"), step: f.get("step"), from: f.get("from"),
            to: f.get("to"), variables: cfg.seriesVariables};
  }
  function place(lat, lon) {
    return fmt(Math.abs(lat), 2) + "°" + (lat < 0 ? "S" : "N") + " " +
      fmt(Math.abs(lon), 2) + "°" + (lon < 0 ? "W" : "E");
  }
  function pointText(p) {
    if (!p) return "";
    var km = num(p.distance_km), text = place(num(p.latitude), num(p.longitude));
    if (p.location_id === undefined) return text;
    var away = isFinite(km) ? ", " + fmt(km, 1) + " km from the place asked" : "";
    return text + " (grid point " + p.location_id + away + ")";
  }
  function loadSeries() {
    var p = seriesParams(), step = p.step || "day", words = STEP_WORDS[step] || STEP_WORDS.day;
    var qs = query(p);
    document.getElementById("series-csv").href = cfg.seriesUrl + "?" + qs + "&format=csv";
    document.getElementById("series-json").href = cfg.seriesUrl + "?" + qs;
    syncLocation();
    status("series-status", "Reading the series…");
    var tempEl = document.getElementById("temp-chart"), precipEl = document.getElementById("precip-chart");
    return getJSON(cfg.seriesUrl + "?" + qs).then(function (j) {
      var s = columnsOf(j), n = s.time.length;
      var temp = pick(s.cols, ["temperature_2m_mean", "temperature_2m"]);
      var lo = s.cols.temperature_2m_min, hi = s.cols.temperature_2m_max;
      var precip = pick(s.cols, ["total_precipitation_sum", "total_precipitation"]);
      var where = pointText(j.point);
      var span = n ? (step === "hour" ? hourText(s.time[0]) + " to " + hourText(s.time[n - 1]) + " UTC"
                                      : dayText(s.time[0]) + " to " + dayText(s.time[n - 1])) : "";
      status("series-status", n.toLocaleString("en") + " " + (n === 1 ? words[0] : words[1]) + " at " + where +
             (span ? ", " + span : ""));
      var xLabel = step === "hour" ? "time (UTC)" : step === "day" ? "day (UTC)" : "month";
      if (temp) {
        var band = (lo && hi && temp.name !== "temperature_2m") ? {lo: lo, hi: hi} : null;
        document.getElementById("temp-caption").textContent = "Temperature at 2 m, " + words[2] +
          (band ? " mean with min-max" : "") + " (°C)";
        tempEl.innerHTML = lineChart(s.time, temp, band, "Temperature at " + where, "°C", xLabel, step);
        var readCols = band ? [["min", lo], ["mean", temp.values], ["max", hi]] : [["", temp.values]];
        hover(tempEl, s.time, readCols, "°C", step);
      } else {
        tempEl.innerHTML = '<p class="empty">The series holds no temperature.</p>';
      }
      if (precip) {
        document.getElementById("precip-caption").textContent = "Precipitation, " +
          (step === "hour" ? "hourly" : words[2] + " total") + " (mm)";
        precipEl.innerHTML = barChart(s.time, precip.values, "Precipitation at " + where, "mm", xLabel, step);
        hover(precipEl, s.time, [["", precip.values]], "mm", step);
      } else {
        precipEl.innerHTML = '<p class="empty">The series holds no precipitation.</p>';
      }
    }).catch(function (err) {
      status("series-status", err.message, true);
      tempEl.innerHTML = ""; precipEl.innerHTML = "";
    });
  }

  // ---- the map ----
  function colour(palette, f) {
    if (!isFinite(f)) return "#e2e8f0";
    f = Math.min(Math.max(f, 0), 1) * (palette.length - 1);
    var i = Math.min(Math.floor(f), palette.length - 2), r = f - i;
    var a = palette[i], b = palette[i + 1], out = "#";
    for (var c = 1; c < 7; c += 2) {
      var v = Math.round(parseInt(a.substr(c, 2), 16) * (1 - r) + parseInt(b.substr(c, 2), 16) * r);
      out += (v < 16 ? "0" : "") + v.toString(16);
    }
    return out;
  }
  function gridStep(values) {
    var u = Array.from(new Set(values.map(function (v) { return Math.round(v * 1000) / 1000; })));
    u.sort(function (a, b) { return a - b; });
    var best = Infinity;
    for (var i = 1; i < u.length; i++) { var d = u[i] - u[i - 1]; if (d > 1e-6 && d < best) best = d; }
    return isFinite(best) ? best : (Number(cfg.grid) || 0.25);
  }
  function mapParams() {
    var f = new FormData(mapForm);
    return {table: cfg.table, time: f.get("time"), variable: f.get("variable"), area: cfg.area};
  }
  function loadMap() {
    var p = mapParams(), qs = query(p), unit = (cfg.units || {})[p.variable] || "";
    document.getElementById("map-csv").href = cfg.mapUrl + "?" + qs + "&format=csv";
    document.getElementById("map-json").href = cfg.mapUrl + "?" + qs;
    syncLocation();
    status("map-status", "Reading the hour…");
    var box = document.getElementById("map-chart");
    return getJSON(cfg.mapUrl + "?" + qs).then(function (j) {
      var m = mapOf(j), n = m.val.length;
      if (!n) throw new Error("no grid point holds " + p.variable + " at that hour");
      var stepLat = gridStep(m.lat), stepLon = gridStep(m.lon), ext = extent([m.val]);
      var lonExt = extent([m.lon]), latExt = extent([m.lat]);  // not Math.min.apply: a large map overflows the stack
      var west = lonExt[0] - stepLon / 2, east = lonExt[1] + stepLon / 2;
      var south = latExt[0] - stepLat / 2, north = latExt[1] + stepLat / 2;
      var plotW = W - 120, maxH = 420, scale = Math.min(plotW / (east - west), maxH / (north - south));
      var mw = (east - west) * scale, mh = (north - south) * scale, ox = 50, oy = 16, vh = mh + oy + 40;
      var palette = /precip|snow/.test(p.variable) ? PRECIP_PALETTE : PALETTE;
      var span = ext[1] - ext[0] || 1;
      function fx(lon) { return ox + (lon - stepLon / 2 - west) * scale; }
      function fy(lat) { return oy + (north - lat - stepLat / 2) * scale; }
      var body = [], cw = (stepLon * scale).toFixed(2), ch = (stepLat * scale).toFixed(2);
      if (n <= MAX_RECT_CELLS) {
        for (var i = 0; i < n; i++) {
          body.push('<rect class="gp" data-i="' + i + '" data-lat="' + m.lat[i] + '" data-lon="' + m.lon[i] +
            '" x="' + fx(m.lon[i]).toFixed(2) + '" y="' + fy(m.lat[i]).toFixed(2) + '" width="' + cw +
            '" height="' + ch + '" fill="' + colour(palette, (m.val[i] - ext[0]) / span) + '"/>');
        }
      } else {
        var canvas = document.createElement("canvas");
        canvas.width = Math.ceil(mw); canvas.height = Math.ceil(mh);
        var g = canvas.getContext("2d");
        for (var k = 0; k < n; k++) {
          g.fillStyle = colour(palette, (m.val[k] - ext[0]) / span);
          g.fillRect(fx(m.lon[k]) - ox, fy(m.lat[k]) - oy, stepLon * scale + 0.5, stepLat * scale + 0.5);
        }
        body.push(el("image", {"class": "cells", x: ox, y: oy, width: mw, height: mh, href: canvas.toDataURL()}));
      }
      // Axes in degrees, a colour bar with the range, the readout.
      var lonTicks = niceTicks(west, east, 5).filter(function (t) { return t >= west && t <= east; });
      var latTicks = niceTicks(south, north, 4).filter(function (t) { return t >= south && t <= north; });
      var deg = function (t) { return +t.toFixed(2) + "°"; };
      lonTicks.forEach(function (t) {
        body.push(el("text", {"class": "tick", x: ox + (t - west) * scale, y: oy + mh + 14, "text-anchor": "middle"},
                     deg(t)));
      });
      latTicks.forEach(function (t) {
        body.push(el("text", {"class": "tick", x: ox - 4, y: oy + (north - t) * scale + 4, "text-anchor": "end"},
                     deg(t)));
      });
      // The colour bar: the palette's last colour (the highest value) at the top.
      var bx = ox + mw + 14, stops = palette.map(function (c, idx) {
        return el("stop", {offset: idx / (palette.length - 1), "stop-color": palette[palette.length - 1 - idx]});
      }).join("");
      body.push('<defs><linearGradient id="legend-grad" x1="0" x2="0" y1="0" y2="1">' + stops +
                "</linearGradient></defs>");
      body.push(el("rect", {x: bx, y: oy, width: 12, height: mh, fill: "url(#legend-grad)"}));
      body.push(el("text", {"class": "tick legend-max", x: bx + 16, y: oy + 10}, fmt(ext[1]) + " " + unit));
      body.push(el("text", {"class": "tick legend-min", x: bx + 16, y: oy + mh}, fmt(ext[0]) + " " + unit));
      body.push(el("text", {"class": "readout", x: ox, y: oy + mh + 32}, ""));
      var label = p.variable + " at " + String(j.time || p.time).replace("T", " ").slice(0, 16) + " UTC";
      var vw = bx + 80;
      box.innerHTML = '<svg class="chart map" viewBox="0 0 ' + vw.toFixed(0) + " " + vh.toFixed(0) +
        '" role="img" aria-label="' + esc(label) + '" data-cells="' + n + '" data-variable="' + esc(p.variable) +
        '" xmlns="http://www.w3.org/2000/svg">' + el("title", {}, label) + body.join("") + "</svg>";
      document.getElementById("map-caption").textContent = label + " (" + unit + "), " + n.toLocaleString("en") +
        " grid points";
      status("map-status", n.toLocaleString("en") + " grid points, " + fmt(ext[0]) + " to " + fmt(ext[1]) + " " + unit);
      var svg = box.querySelector("svg"), readout = svg.querySelector(".readout");
      function cellAt(ev) {
        var ctm = svg.getScreenCTM();
        if (!ctm) return -1;
        var x = (ev.clientX - ctm.e) / ctm.a, y = (ev.clientY - ctm.f) / ctm.d;
        var lon = west + (x - ox) / scale, lat = north - (y - oy) / scale, best = -1, bd = Infinity;
        for (var q = 0; q < n; q++) {
          var dl = Math.abs(m.lon[q] - lon) / stepLon, dt = Math.abs(m.lat[q] - lat) / stepLat;
          if (dl <= 0.5 && dt <= 0.5 && dl + dt < bd) { bd = dl + dt; best = q; }
        }
        return best;
      }
      svg.addEventListener("mousemove", function (ev) {
        var q = cellAt(ev);
        readout.textContent = q < 0 ? ""
          : place(m.lat[q], m.lon[q]) + ": " + fmt(m.val[q]) + " " + unit + " (click: its series)";
      });
      svg.addEventListener("click", function (ev) {
        var q = cellAt(ev);
        if (q < 0) return;
        seriesForm.elements.lat.value = m.lat[q];
        seriesForm.elements.lon.value = m.lon[q];
        svg.querySelectorAll(".gp.sel").forEach(function (c) { c.classList.remove("sel"); });
        var cell = svg.querySelector('.gp[data-i="' + q + '"]');
        if (cell) cell.classList.add("sel");
        loadSeries();
        document.getElementById("series").scrollIntoView({behavior: "smooth"});
      });
    }).catch(function (err) {
      status("map-status", err.message, true);
      box.innerHTML = "";
    });
  }

  // The choices live in the page's query string too, so a view can be linked to and reloaded.
  function syncLocation() {
    var s = seriesParams(), mp = mapParams();
    var qs = query({table: cfg.table, area: cfg.area, lat: s.lat, lon: s.lon, step: s.step, from: s.from, to: s.to,
                    time: mp.time, variable: mp.variable});
    try { history.replaceState(null, "", location.pathname + "?" + qs); } catch (e) { /* sandboxed: fine */ }
  }
  function restore() {
    var u = new URLSearchParams(location.search);
    ["lat", "lon", "step", "from", "to"].forEach(function (k) {
      if (u.get(k)) seriesForm.elements[k].value = u.get(k);
    });
    ["time", "variable"].forEach(function (k) { if (u.get(k)) mapForm.elements[k].value = u.get(k); });
  }

  if (!seriesForm || !mapForm) return;
  seriesForm.addEventListener("submit", function (ev) { ev.preventDefault(); loadSeries(); });
  mapForm.addEventListener("submit", function (ev) { ev.preventDefault(); loadMap(); });
  restore();
  window.era5Data = {loadSeries: loadSeries, loadMap: loadMap};
  loadSeries();
  loadMap();
})();
""".replace("%MAX_RECT_CELLS%", str(MAX_RECT_CELLS))
