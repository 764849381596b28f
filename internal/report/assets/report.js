// reprise report: draws every chart of the page with uPlot from the JSON
// block #report-data (docs/format/report.md). No network, no framework.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const state = { charts: [], ready: false, readyMs: 0 };
  window.reprise = state;

  // lastActivity is where a time chart's x axis ends: its last point, or
  // for series on the chart's buckets the end of the last bucket in which
  // any series is neither empty nor 0 (a rate of 0 after the run is not
  // activity). Time charts share a cursor and zoom together, but each
  // ends at its own last activity, so none is mostly empty.
  function lastActivity(c) {
    let end = 0;
    for (const s of c.series) if (s.x) for (let i = 0; i < s.x.length; i++) {
      if (s.x[i] != null && s.y[i] != null && s.x[i] > end) end = s.x[i];
    }
    if (c.x && c.x.length > 0) {
      const w = c.x.length > 1 ? c.x[1] - c.x[0] : 1;
      let last = -1, lastSet = -1;
      for (let i = c.x.length - 1; i >= 0 && last < 0; i--) {
        if (c.series.some((s) => !s.x && s.y[i] != null && s.y[i] !== 0)) last = i;
        if (lastSet < 0 && c.series.some((s) => !s.x && s.y[i] != null)) lastSet = i;
      }
      // All 0 (no error at all): the last bucket with a value.
      if (last < 0) last = lastSet;
      if (last >= 0) end = Math.max(end, c.x[last] + (c.kind === "steps" ? w : 0));
    }
    return end;
  }
  const timeSync = uPlot.sync("time");
  const dottedOf = new Map(); // chart id → its dotted series

  // pointSize is a scatter's dot diameter (CSS px): large for a few
  // points, small for thousands.
  const pointSize = (n) => (n <= 100 ? 8 : n <= 2000 ? 5 : 3);

  // padded widens [min, max] so that marks at the ends are drawn whole;
  // a single value gets a range around it. No value (every one null, or
  // none positive on a log axis) gets [0, 1], or [1, 10] on a log axis,
  // whose splits would never end at 0.
  function padded(min, max, log) {
    const none = !Number.isFinite(min) || !Number.isFinite(max) || (log && !(min > 0 && max > 0));
    if (none) return log ? [1, 10] : [0, 1];
    if (log) {
      if (min === max) return [min / 2, max * 2];
      const f = Math.pow(max / min, 0.04);
      return uPlot.rangeLog(min / f, max * f, 10, false);
    }
    if (min === max) return min === 0 ? [-0.05, 1] : [min - Math.abs(min) * 0.1, max + Math.abs(max) * 0.1];
    return uPlot.rangeNum(min, max, 0.06, true);
  }

  const dpr = () => window.devicePixelRatio || 1;

  // positive drops values a log axis cannot show.
  const positive = (ys) => ys.map((v) => (v != null && v > 0 ? v : null));

  // build turns a chart spec into uPlot options and data.
  function build(c, width) {
    // dotted are the series (by index in c.series) drawn with a dot at
    // each point: short lines, so that a one-point front shows.
    const dotted = new Set();
    const own = c.series.some((s) => s.x && s.x.length > 0);
    const xScale = { time: false };
    const yScale = {};
    if (c.xaxis.log) Object.assign(xScale, { distr: 3, log: 10 });
    if (c.yaxis.log) Object.assign(yScale, { distr: 3, log: 10 });
    if (c.kind === "bars") yScale.range = (u, min, max) => [Math.min(0, min), max > 0 ? max * 1.08 : 1];
    else yScale.range = (u, min, max) => padded(min, max, !!c.yaxis.log);
    // Own x (scatters, telemetry): a constant x (every prompt the same
    // length) gets a range around it instead of an empty one.
    if (own && !c.time) xScale.range = (u, min, max) => padded(min, max, !!c.xaxis.log);
    const axes = [
      { label: c.xaxis.label, stroke: "#333", grid: { stroke: "#eee" } },
      { label: c.yaxis.label, stroke: "#333", grid: { stroke: "#eee" }, size: 60 },
    ];
    const opts = {
      width: width,
      height: 300,
      scales: { x: xScale, y: yScale },
      axes: axes,
      series: [{ label: c.xaxis.label }],
      legend: { live: !own },
      cursor: { drag: { x: true, y: own } },
      hooks: { drawClear: [drawShade(c)], draw: [drawMarks(c, dotted)] },
    };
    if (c.bands) {
      opts.bands = c.bands.map((b) => ({ series: [b.upper + 1, b.lower + 1], fill: c.series[b.upper].color + "22" }));
    }
    if (c.time) opts.cursor.sync = { key: timeSync.key };
    let d;
    if (own) {
      opts.mode = 2;
      d = [null];
      for (const s of c.series) {
        const ys = c.yaxis.log ? positive(s.y) : s.y;
        const xs = c.xaxis.log ? positive(s.x) : s.x;
        d.push([xs, ys]);
        const line = c.kind !== "scatter";
        const n = s.y.filter((v) => v != null).length;
        if (line && n <= 64) dotted.add(opts.series.length - 1);
        opts.series.push({
          label: s.label,
          stroke: s.color,
          fill: line ? undefined : s.color + "99",
          width: line ? 1.5 : 0,
          dash: s.dash ? [6, 4] : undefined,
          paths: line ? uPlot.paths.linear() : uPlot.paths.points(),
          // A short line (a sweep's front: one point draws no line) shows
          // its points.
          points: { show: false, size: line ? 7 : pointSize(n), width: 0 },
          facets: [{ scale: "x", auto: !c.time, sorted: line ? 1 : 0 }, { scale: "y", auto: true }],
        });
      }
    } else if (c.kind === "bars") {
      // Grouped bars: category i, series k of n at i + (k - (n-1)/2)·w.
      const cats = c.xaxis.categories || [];
      const n = c.series.length;
      const w = 0.8 / n;
      const xs = [];
      const ys = c.series.map(() => []);
      for (let i = 0; i < cats.length; i++) {
        for (let k = 0; k < n; k++) {
          xs.push(i + (k - (n - 1) / 2) * w);
          for (let j = 0; j < n; j++) ys[j].push(j === k ? c.series[k].y[i] : null);
        }
      }
      d = [xs].concat(ys);
      xScale.range = () => [-0.5, cats.length - 0.5];
      axes[0].splits = () => cats.map((_, i) => i);
      axes[0].values = (u, splits) => splits.map((v) => cats[v] || "");
      axes[0].grid = { show: false };
      for (const s of c.series) {
        opts.series.push({
          label: s.label, stroke: s.color, fill: s.color + "cc", width: 0,
          paths: uPlot.paths.bars({ size: [0.95, Infinity] }), points: { show: false },
        });
      }
    } else {
      d = [c.x || []]; // no x: every series empty (a sweep's front with no point measured)
      for (const s of c.series) {
        d.push(c.yaxis.log ? positive(s.y) : s.y);
        opts.series.push({
          label: s.label, stroke: s.color, width: 1.5,
          dash: s.dash ? [6, 4] : undefined,
          paths: c.kind === "steps" ? uPlot.paths.stepped({ align: 1 }) : uPlot.paths.linear(),
          points: { show: false },
        });
      }
    }
    const end = c.time ? lastActivity(c) : 0;
    if (c.time && end > 0) {
      const pad = end * 0.02;
      Object.assign(xScale, { auto: false, min: own ? -pad : 0, max: end + pad });
    }
    if (c.time) opts.hooks.setScale = [zoomTogether];
    return { opts: opts, data: d, end: end, dotted: dotted };
  }

  // drawMarks draws a dot at each point of the dotted series and writes
  // each labelled point's name beside it.
  function drawMarks(c, dotted) {
    return (u) => {
      if (dotted.size === 0 && !c.series.some((s) => s.labels)) return;
      const ctx = u.ctx, r = dpr();
      ctx.save();
      for (const i of dotted) {
        if (!u.series[i + 1].show) continue;
        const xs = u.data[i + 1][0], ys = u.data[i + 1][1];
        ctx.fillStyle = c.series[i].color;
        for (let j = 0; j < xs.length; j++) {
          if (xs[j] == null || ys[j] == null) continue;
          ctx.beginPath();
          ctx.arc(u.valToPos(xs[j], "x", true), u.valToPos(ys[j], "y", true), 3.5 * r, 0, 2 * Math.PI);
          ctx.fill();
        }
      }
      ctx.font = `${Math.round(11 * r)}px sans-serif`;
      ctx.fillStyle = "#222";
      ctx.textBaseline = "bottom";
      c.series.forEach((s, i) => {
        if (!s.labels || !u.series[i + 1].show) return;
        const xs = u.data[i + 1][0], ys = u.data[i + 1][1];
        for (let j = 0; j < s.labels.length; j++) {
          if (!s.labels[j] || xs[j] == null || ys[j] == null) continue;
          // Right of the point, or left of it where the text would leave
          // the plot.
          const x = u.valToPos(xs[j], "x", true), y = u.valToPos(ys[j], "y", true) - 4 * r;
          const w = ctx.measureText(s.labels[j]).width;
          if (x + 6 * r + w > u.bbox.left + u.bbox.width) ctx.fillText(s.labels[j], x - 6 * r - w, y);
          else ctx.fillText(s.labels[j], x + 6 * r, y);
        }
      });
      ctx.restore();
    };
  }

  // zoomTogether gives every time chart the x range one of them was
  // zoomed to, so that requests and telemetry stay aligned.
  // Back at its own full range (a double-click), it puts every other
  // time chart back at its own. Charts being built do not propagate
  // their first range.
  const timePlots = [];
  const fullRange = new Map();
  let zooming = true; // until every chart is built
  function zoomTogether(u, key) {
    if (key !== "x" || zooming) return;
    zooming = true;
    try {
      const { min, max } = u.scales.x;
      const own = fullRange.get(u);
      const reset = own && Math.abs(own[0] - min) < 1e-9 && Math.abs(own[1] - max) < 1e-9;
      for (const p of timePlots) {
        if (p === u) continue;
        const [lo, hi] = reset ? fullRange.get(p) : [min, max];
        if (p.scales.x.min !== lo || p.scales.x.max !== hi) p.setScale("x", { min: lo, max: hi });
      }
    } finally {
      zooming = false;
    }
  }

  // drawShade fills the chart's shaded x ranges (warmup) under the series.
  function drawShade(c) {
    return (u) => {
      if (!c.shade) return;
      const ctx = u.ctx;
      ctx.save();
      ctx.fillStyle = "rgba(120,120,120,0.15)";
      for (const s of c.shade) {
        const x0 = Math.max(u.bbox.left, u.valToPos(s.from, "x", true));
        const x1 = Math.min(u.bbox.left + u.bbox.width, u.valToPos(s.to, "x", true));
        if (x1 > x0) ctx.fillRect(x0, u.bbox.top, x1 - x0, u.bbox.height);
      }
      ctx.restore();
    };
  }

  // count says how many points a chart draws and how many series have any.
  function count(d, own) {
    let points = 0, nonEmpty = 0;
    for (let i = 1; i < d.length; i++) {
      const ys = own ? d[i][1] : d[i];
      let k = 0;
      for (const v of ys) if (v != null) k++;
      points += k;
      if (k > 0) nonEmpty++;
    }
    return { points: points, nonEmpty: nonEmpty };
  }

  function download(name, blob) {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.appendChild(a);
    a.click();
    setTimeout(() => { URL.revokeObjectURL(a.href); a.remove(); }, 1000);
  }

  // savePNG draws the title, the plot and the legend on one canvas.
  function pngCanvas(u, c) {
    const r = dpr();
    const src = u.ctx.canvas;
    const head = Math.round(28 * r), legendH = Math.round(22 * r);
    const out = document.createElement("canvas");
    out.width = src.width;
    out.height = src.height + head + legendH;
    const ctx = out.getContext("2d");
    ctx.fillStyle = "#fff";
    ctx.fillRect(0, 0, out.width, out.height);
    ctx.fillStyle = "#111";
    ctx.font = `bold ${Math.round(14 * r)}px sans-serif`;
    ctx.fillText(c.title, 8 * r, 19 * r);
    ctx.drawImage(src, 0, head);
    ctx.font = `${Math.round(12 * r)}px sans-serif`;
    let x = 8 * r;
    const y = head + src.height + 15 * r;
    u.series.forEach((s, i) => {
      if (i === 0 || !s.show) return;
      ctx.fillStyle = c.series[i - 1].color;
      ctx.fillRect(x, y - 9 * r, 10 * r, 10 * r);
      ctx.fillStyle = "#111";
      ctx.fillText(s.label, x + 14 * r, y);
      x += ctx.measureText(s.label).width + 30 * r;
    });
    return out;
  }

  function esc(s) {
    return String(s).replace(/[&<>"]/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[ch]);
  }

  // svgText draws the chart again as SVG: axes, grid, shade, series and
  // legend, from uPlot's scales (vectors, not the canvas' pixels).
  function svgText(u, c) {
    const r = dpr();
    const L = u.bbox.left / r, T = u.bbox.top / r, W = u.bbox.width / r, H = u.bbox.height / r;
    const head = 28;
    const width = u.width, height = u.height + head + 24;
    const px = (v) => L + u.valToPos(v, "x");
    const py = (v, sc) => T + u.valToPos(v, sc || "y");
    const o = [];
    o.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="sans-serif" font-size="11">`);
    o.push(`<rect width="100%" height="100%" fill="#fff"/>`);
    o.push(`<text x="8" y="19" font-size="14" font-weight="bold">${esc(c.title)}</text>`);
    o.push(`<g transform="translate(0,${head})">`);
    o.push(`<defs><clipPath id="plot"><rect x="${L}" y="${T}" width="${W}" height="${H}"/></clipPath></defs>`);
    for (const s of c.shade || []) {
      const x0 = Math.max(L, px(s.from)), x1 = Math.min(L + W, px(s.to));
      if (x1 > x0) o.push(`<rect x="${x0}" y="${T}" width="${x1 - x0}" height="${H}" fill="rgba(120,120,120,0.15)"/>`);
    }
    const ax = u.axes;
    (ax[0]._splits || []).forEach((v, i) => {
      const x = px(v);
      if (x < L - 0.5 || x > L + W + 0.5) return;
      o.push(`<line x1="${x}" y1="${T}" x2="${x}" y2="${T + H}" stroke="#eee"/>`);
      o.push(`<text x="${x}" y="${T + H + 14}" text-anchor="middle">${esc((ax[0]._values || [])[i] ?? "")}</text>`);
    });
    (ax[1]._splits || []).forEach((v, i) => {
      const y = py(v);
      if (y < T - 0.5 || y > T + H + 0.5) return;
      o.push(`<line x1="${L}" y1="${y}" x2="${L + W}" y2="${y}" stroke="#eee"/>`);
      o.push(`<text x="${L - 4}" y="${y + 4}" text-anchor="end">${esc((ax[1]._values || [])[i] ?? "")}</text>`);
    });
    o.push(`<rect x="${L}" y="${T}" width="${W}" height="${H}" fill="none" stroke="#999"/>`);
    o.push(`<text x="${L + W / 2}" y="${T + H + 32}" text-anchor="middle">${esc(c.xaxis.label)}</text>`);
    o.push(`<text transform="translate(14,${T + H / 2}) rotate(-90)" text-anchor="middle">${esc(c.yaxis.label)}</text>`);
    o.push(`<g clip-path="url(#plot)">`);
    const own = u.mode === 2;
    for (let i = 1; i < u.series.length; i++) {
      if (!u.series[i].show) continue;
      const spec = c.series[i - 1];
      const xs = own ? u.data[i][0] : u.data[0];
      const ys = own ? u.data[i][1] : u.data[i];
      if (c.kind === "scatter") {
        const dots = [];
        for (let j = 0; j < ys.length; j++) {
          if (ys[j] == null || xs[j] == null) continue;
          dots.push(`M${px(xs[j]).toFixed(1)} ${py(ys[j]).toFixed(1)}h0`);
        }
        o.push(`<path d="${dots.join("")}" stroke="${spec.color}" stroke-opacity="0.6" stroke-width="${pointSize(dots.length)}" stroke-linecap="round"/>`);
      } else if (c.kind === "bars") {
        const n = c.series.length, w = (0.8 / n) * 0.95;
        for (let j = 0; j < ys.length; j++) {
          if (ys[j] == null) continue;
          const x0 = px(xs[j] - w / 2), x1 = px(xs[j] + w / 2), y = py(ys[j]), y0 = py(Math.max(u.scales.y.min, 0));
          o.push(`<rect x="${x0}" y="${Math.min(y, y0)}" width="${x1 - x0}" height="${Math.abs(y0 - y)}" fill="${spec.color}"/>`);
        }
      } else {
        let dpath = "", pen = false;
        for (let j = 0; j < ys.length; j++) {
          if (ys[j] == null || xs[j] == null) { pen = false; continue; }
          const x = px(xs[j]).toFixed(1), y = py(ys[j]).toFixed(1);
          if (!pen) dpath += `M${x} ${y}`;
          else if (c.kind === "steps") dpath += `H${x}V${y}`;
          else dpath += `L${x} ${y}`;
          pen = true;
        }
        const dash = spec.dash ? ` stroke-dasharray="6 4"` : "";
        o.push(`<path d="${dpath}" fill="none" stroke="${spec.color}" stroke-width="1.5"${dash}/>`);
        if (dottedOf.get(c.id) && dottedOf.get(c.id).has(i - 1)) {
          const dots = [];
          for (let j = 0; j < ys.length; j++) if (ys[j] != null && xs[j] != null) dots.push(`M${px(xs[j]).toFixed(1)} ${py(ys[j]).toFixed(1)}h0`);
          o.push(`<path d="${dots.join("")}" stroke="${spec.color}" stroke-width="7" stroke-linecap="round"/>`);
        }
      }
      if (spec.labels) {
        for (let j = 0; j < spec.labels.length; j++) {
          if (!spec.labels[j] || xs[j] == null || ys[j] == null) continue;
          o.push(`<text x="${(px(xs[j]) + 6).toFixed(1)}" y="${(py(ys[j]) - 4).toFixed(1)}">${esc(spec.labels[j])}</text>`);
        }
      }
    }
    o.push(`</g></g>`);
    let x = 8;
    const y = head + u.height + 16;
    u.series.forEach((s, i) => {
      if (i === 0 || !s.show) return;
      o.push(`<rect x="${x}" y="${y - 9}" width="10" height="10" fill="${c.series[i - 1].color}"/>`);
      o.push(`<text x="${x + 14}" y="${y}">${esc(s.label)}</text>`);
      x += 7 * String(s.label).length + 34;
    });
    o.push(`</svg>`);
    return o.join("\n");
  }

  function make(fig, c) {
    const holder = fig.querySelector(".plot");
    const width = Math.max(320, holder.clientWidth || 560);
    const b = build(c, width);
    dottedOf.set(c.id, b.dotted);
    const u = new uPlot(b.opts, b.data, holder);
    if (c.time) {
      timePlots.push(u);
      fullRange.set(u, [u.scales.x.min, u.scales.x.max]);
    }
    const n = count(b.data, b.opts.mode === 2);
    state.charts.push({ id: c.id, kind: c.kind, time: !!c.time, series: b.data.length - 1, nonEmpty: n.nonEmpty, points: n.points,
      end: b.end, labels: c.series.reduce((k, s) => k + (s.labels ? s.labels.filter((l) => l).length : 0), 0) });
    fig.querySelector('[data-save="png"]').addEventListener("click", () =>
      pngCanvas(u, c).toBlob((blob) => download(c.id + ".png", blob)));
    fig.querySelector('[data-save="svg"]').addEventListener("click", () =>
      download(c.id + ".svg", new Blob([svgText(u, c)], { type: "image/svg+xml" })));
    state.plots = state.plots || {};
    state.plots[c.id] = u;
  }

  const specs = new Map(data.charts.map((c) => [c.id, c]));
  for (const fig of document.querySelectorAll("figure[data-chart]")) {
    const c = specs.get(fig.dataset.chart);
    if (!c) {
      console.error("reprise report: no data for chart " + fig.dataset.chart);
      continue;
    }
    make(fig, c);
  }
  state.svg = (id) => svgText(state.plots[id], specs.get(id));
  state.png = (id) => pngCanvas(state.plots[id], specs.get(id)).toDataURL("image/png");
  requestAnimationFrame(() => {
    // uPlot sets the first scales in a microtask, which ran by now.
    zooming = false;
    state.readyMs = performance.now();
    state.ready = true;
  });
})();
