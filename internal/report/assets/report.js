// reprise report: draws every chart of the page with uPlot from the JSON
// block #report-data (docs/format/report.md). No network, no framework.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const state = { charts: [], ready: false, readyMs: 0 };
  window.reprise = state;

  // Time charts share one x range: 0 to the latest time of any of them.
  let tmax = 0;
  for (const c of data.charts) {
    if (!c.time) continue;
    if (c.x) for (const v of c.x) if (v != null && v > tmax) tmax = v;
    for (const s of c.series) if (s.x) for (const v of s.x) if (v != null && v > tmax) tmax = v;
  }
  const timeSync = uPlot.sync("time");

  const dpr = () => window.devicePixelRatio || 1;

  // positive drops values a log axis cannot show.
  const positive = (ys) => ys.map((v) => (v != null && v > 0 ? v : null));

  // build turns a chart spec into uPlot options and data.
  function build(c, width) {
    const own = c.series.some((s) => s.x && s.x.length > 0);
    const xScale = { time: false };
    const yScale = {};
    if (c.xaxis.log) Object.assign(xScale, { distr: 3, log: 10 });
    if (c.yaxis.log) Object.assign(yScale, { distr: 3, log: 10 });
    else if (c.kind === "bars") yScale.range = (u, min, max) => [Math.min(0, min), max > 0 ? max * 1.08 : 1];
    else yScale.range = (u, min, max) => (min === max ? [min - 1, max + 1] : uPlot.rangeNum(min, max, 0.08, true));
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
      hooks: { drawClear: [drawShade(c)] },
    };
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
        opts.series.push({
          label: s.label,
          stroke: s.color,
          fill: line ? undefined : s.color + "99",
          width: line ? 1.5 : 0,
          dash: s.dash ? [6, 4] : undefined,
          paths: line ? uPlot.paths.linear() : uPlot.paths.points(),
          points: { show: false, size: line ? 4 : 3, width: 0 },
          facets: [{ scale: "x", auto: !(c.time && tmax > 0), sorted: line ? 1 : 0 }, { scale: "y", auto: true }],
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
      d = [c.x];
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
    if (c.time && tmax > 0) Object.assign(xScale, { auto: false, min: 0, max: tmax });
    if (c.time) opts.hooks.setScale = [zoomTogether];
    return { opts: opts, data: d };
  }

  // zoomTogether gives every time chart the x range one of them was
  // zoomed to, so that requests and telemetry stay aligned.
  const timePlots = [];
  let zooming = false;
  function zoomTogether(u, key) {
    if (key !== "x" || zooming) return;
    zooming = true;
    try {
      const { min, max } = u.scales.x;
      for (const p of timePlots) {
        if (p !== u && (p.scales.x.min !== min || p.scales.x.max !== max)) p.setScale("x", { min: min, max: max });
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
        o.push(`<path d="${dots.join("")}" stroke="${spec.color}" stroke-opacity="0.6" stroke-width="3" stroke-linecap="round"/>`);
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
    const u = new uPlot(b.opts, b.data, holder);
    if (c.time) timePlots.push(u);
    const n = count(b.data, b.opts.mode === 2);
    state.charts.push({ id: c.id, kind: c.kind, time: !!c.time, series: b.data.length - 1, nonEmpty: n.nonEmpty, points: n.points });
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
    state.readyMs = performance.now();
    state.ready = true;
  });
})();
