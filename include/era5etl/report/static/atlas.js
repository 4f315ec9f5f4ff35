// The Data view's Atlas panel: which places of the table have changed most. The ranking comes from
// /era5/atlas (the same object as `python -m era5etl atlas --json`) as a table beside the map of every grid
// point's trend from /era5/atlas.png (the CLI's --png: coastlines and a colour bar). A click on a city's row
// (or a country's) opens its Climate panel below the atlas.
(function () {
  "use strict";

  const cfg = JSON.parse(document.getElementById("era5-config").textContent);
  const form = document.getElementById("atlas-form");
  if (!form) return;
  const status = document.getElementById("atlas-status");
  const map = document.getElementById("atlas-map");
  const rows = document.getElementById("atlas-rows");
  const zonal = document.getElementById("atlas-zonal");
  const jsonLink = document.getElementById("atlas-json");
  window.era5Atlas = { data: null };

  function params() {
    const f = new FormData(form);
    const p = { table: cfg.table || "", variable: f.get("variable"), by: f.get("by"), top: f.get("top") };
    ["from", "to"].forEach((k) => {
      const v = String(f.get(k) || "").trim();
      if (v) p[k] = v;
    });
    return p;
  }

  function url(base, p) {
    const q = Object.keys(p).filter((k) => p[k] !== "").map((k) => encodeURIComponent(k) + "=" +
      encodeURIComponent(p[k]));
    return base + "?" + q.join("&");
  }

  // Figures to their meaning: a trend to 3 significant digits, not float noise.
  function signed(v) {
    if (v === null || v === undefined) return "–";
    const digits = Math.max(0, 2 - Math.floor(Math.log10(Math.max(Math.abs(v), 1e-9))));
    return (v >= 0 ? "+" : "") + v.toFixed(Math.min(digits, 4));
  }

  function named(r) {
    if (r.city) return r.city.described;
    if (r.country) return r.country.name + " (" + r.country.points + " points)";
    if (r.region) return r.region.name + " (" + r.region.points + " points)";
    return r.grid_point.latitude + ", " + r.grid_point.longitude;
  }

  function openClimate(r, variable) {
    const climate = document.getElementById("climate-form");
    if (!climate) return;
    ["place", "country", "box", "region"].forEach((k) => { climate.elements[k].value = ""; });
    if (r.city) {
      climate.elements.place.value = r.city.name;
      climate.elements.country.value = r.city.country;
    } else if (r.country) {
      climate.elements.region.value = r.country.name;
    } else {
      const p = r.grid_point;
      climate.elements.box.value = p.latitude + "/" + p.longitude + "/" + p.latitude + "/" + p.longitude;
    }
    const choice = Array.from(climate.elements.variable.options).find((o) => o.value === variable);
    if (choice) climate.elements.variable.value = variable;
    climate.requestSubmit();
    document.getElementById("climate").scrollIntoView({ block: "start" });
  }

  function cell(text, cls) {
    const td = document.createElement("td");
    td.textContent = text;
    if (cls) td.className = cls;
    return td;
  }

  function draw(j) {
    rows.textContent = "";
    j.ranking.forEach((r) => {
      const t = r.trend_per_decade;
      const tr = document.createElement("tr");
      tr.tabIndex = 0;
      tr.title = "open the Climate panel of " + named(r);
      tr.dataset.rank = String(r.rank);
      [cell(String(r.rank), "num"), cell(named(r)),
        cell(signed(t.ols) + " " + j.unit, "num"),
        cell(t.ci95 ? signed(t.ci95[0]) + " to " + signed(t.ci95[1]) : "–", "num"),
        cell(signed(r.anomaly_last_10), "num"), cell(String(r.highest_year ?? "–"), "num")]
        .forEach((td) => tr.appendChild(td));
      const open = () => openClimate(r, j.variable);
      tr.addEventListener("click", open);
      tr.addEventListener("keydown", (ev) => { if (ev.key === "Enter") open(); });
      rows.appendChild(tr);
    });
    const z = j.zonal.global;
    zonal.textContent = j.statistic + " " + j.variable + ", " + j.years.join("-") + ": " + j.ranked + " of " +
      j.units + " ranked. Area-weighted mean trend " + signed(z.mean) + " " + j.unit + " per decade over " +
      z.points + " points" + (j.zonal.arctic_amplification ? "; Arctic amplification " +
        j.zonal.arctic_amplification.toFixed(2) : "") + "." + (j.notes.length ? " " + j.notes.join("; ") + "." : "");
  }

  async function load(ev) {
    if (ev) ev.preventDefault();
    const p = params();
    jsonLink.href = url(cfg.atlasUrl, p);
    status.textContent = "Loading…";
    status.classList.remove("error");
    try {
      const r = await fetch(url(cfg.atlasUrl, p), { credentials: "same-origin" });
      const j = await r.json();
      if (!r.ok) throw new Error(j.detail || r.statusText);
      window.era5Atlas.data = j;
      draw(j);
      const m = { table: p.table, variable: p.variable };
      if (p.from) m.from = p.from;
      if (p.to) m.to = p.to;
      map.alt = "trend per decade of " + j.variable + " at every grid point";
      map.src = url(cfg.atlasMapUrl, m);
      status.textContent = j.ranking.length + " ranked of " + j.units;
    } catch (e) {
      rows.textContent = "";
      zonal.textContent = "";
      map.removeAttribute("src");
      status.textContent = String(e.message || e);
      status.classList.add("error");
    }
  }

  map.addEventListener("error", () => {
    if (!map.getAttribute("src")) return;
    status.textContent = "the map could not be drawn";
    status.classList.add("error");
  });
  form.addEventListener("submit", load);
})();
