'use strict';
const D = JSON.parse(document.getElementById('syspgo-data').textContent);
const S = D.strings;
const SVGNS = 'http://www.w3.org/2000/svg';
const FINDING_COLORS = ['#e8590c', '#c2255c', '#6741d9', '#0b7285', '#5c940d', '#d9480f', '#862e9c', '#1864ab'];

// ===--- Small helpers --------------------------------------------------=== //
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const k in attrs || {}) {
    if (k === 'text') e.textContent = attrs[k];
    else if (k === 'class') e.className = attrs[k];
    else e.setAttribute(k, attrs[k]);
  }
  for (const c of kids) if (c !== null && c !== undefined) e.append(c);
  return e;
}
function sv(tag, attrs, text) {
  const e = document.createElementNS(SVGNS, tag);
  for (const k in attrs || {}) e.setAttribute(k, attrs[k]);
  if (text !== undefined) e.textContent = text;
  return e;
}
function fmtNs(ns) {
  const a = Math.abs(ns);
  if (a < 1e3) return Math.round(ns) + ' ns';
  if (a < 1e6) return (ns / 1e3).toFixed(a < 1e4 ? 2 : a < 1e5 ? 1 : 0) + ' µs';
  if (a < 1e9) return (ns / 1e6).toFixed(a < 1e7 ? 2 : a < 1e8 ? 1 : 0) + ' ms';
  return (ns / 1e9).toFixed(a < 1e10 ? 3 : 2) + ' s';
}
function fmtBytes(b) {
  if (b < 1024) return b + ' B';
  const u = ['KiB', 'MiB', 'GiB', 'TiB'];
  let i = -1;
  do { b /= 1024; ++i; } while (b >= 1024 && i < u.length - 1);
  return b.toFixed(b < 10 ? 2 : 1) + ' ' + u[i];
}
function fmtCount(n) { return Number(n).toLocaleString('en-US'); }
// "1 request", "3 requests", "1,024 requests".
function many(n, word) { return fmtCount(n) + ' ' + word + (n === 1 ? '' : 's'); }
function pct(x) { return (100 * x).toFixed(x < 0.1 ? 2 : 1) + '%'; }
function hashHue(s, lo, span) {
  let h = 2166136261;
  for (let i = 0; i < s.length; ++i) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return lo + ((h >>> 0) % span);
}
// Runs one panel; a panel that fails says so in place and the rest still draw.
function panel(id, fn) {
  try {
    fn();
  } catch (e) {
    window.syspgoError(id + ': ' + (e && e.stack ? e.stack : e));
    const box = document.getElementById(id);
    if (box) box.append(el('p', {class: 'warn', text: 'This panel could not be drawn: ' + e}));
  }
}

// ===--- Header ---------------------------------------------------------=== //
function renderHeader() {
  const r = D.run;
  document.getElementById('title').textContent = 'syspgo report · run ' + r.id + ': ' + (r.command || '(attached)');
  const meta = document.getElementById('run-meta');
  const span = t => el('span', {text: t});
  const end = r.end_ts >= 0 ? r.end_ts : r.span_ns;
  // A filtered read (--pid, --comm, --cgroup, --container) covers some processes: said as the text says it.
  if (r.only) meta.append(el('span', {class: 'only', text: 'only: ' + r.only}));
  meta.append(span('status: ' + r.status), span('host: ' + r.host), span('kernel: ' + r.kernel),
              span('started: ' + new Date(r.start_realtime_ns / 1e6).toISOString().replace('T', ' ').slice(0, 19) + ' UTC'),
              span('command ran: ' + fmtNs(Math.max(0, end - r.command_start_ts))),
              span('events: ' + fmtCount(r.events_recorded)), span('syspgo ' + r.version));
  if (r.events_dropped > 0)
    meta.append(el('span', {class: 'warn', text: 'lost ' + fmtCount(r.events_dropped) + ' events: figures are lower bounds'}));
  if (r.status !== 'complete')
    meta.append(el('span', {class: 'warn', text: 'run is ' + r.status + ': figures cover what was recorded'}));
  const probes = document.getElementById('probes');
  for (const [group, attached, detail, events] of r.probes) {
    const p = el('span', {text: group + (attached ? ' · ' + fmtCount(events) : ' · off'), title: detail || (attached ? 'attached' : 'not attached')});
    if (!attached) p.className = 'off';
    probes.append(p);
  }
}

// ===--- Findings -------------------------------------------------------=== //
function renderFindings() {
  const box = document.getElementById('findings-body');
  const ran = (D.analyses && D.analyses.ran) || [];
  const problems = (D.analyses && D.analyses.problems) || [];
  box.append(el('div', {class: 'note', text: ran.length ? 'Analyses run: ' + ran.join(', ') + '.' :
      'No diagnosing analysis was available to this build of syspgo, so no findings were computed.'}));
  for (const p of problems) box.append(el('div', {class: 'warn', text: p}));
  if (!D.findings.length) {
    if (ran.length) box.append(el('p', {class: 'empty', text: 'No findings for this run: nothing the analyses look for crossed their thresholds.'}));
    return;
  }
  D.findings.forEach((f, i) => {
    const color = FINDING_COLORS[i % FINDING_COLORS.length];
    const card = el('div', {class: 'finding', id: 'finding-' + i, 'data-kind': f.kind, style: '--fc:' + color});
    card.append(el('h3', {}, el('span', {class: 'badge', text: String(i + 1)}), f.title));
    const stats = el('div', {class: 'stats'});
    const stat = (label, value) => stats.append(label, el('b', {text: value}), '   ');
    stat(f.kind + ' · ', fmtCount(f.count) + '×');
    if (f.total_ns) {  // a finding about bytes (random paging) has no time of its own
      stat('total ', fmtNs(f.total_ns));
      stat('worst ', fmtNs(f.worst_ns));
      stat('share of the run ', pct(f.share));
    }
    if (f.period) stat('period ', f.period);
    card.append(stats);
    if (f.facts.length) {
      const dl = el('dl');
      for (const [k, v] of f.facts) dl.append(el('dt', {text: k}), el('dd', {text: v}));
      card.append(dl);
    }
    if (f.fix) card.append(el('div', {class: 'fix', text: 'Fix: ' + f.fix}));
    if (f.evidence.length)
      card.append(el('details', {}, el('summary', {text: 'Evidence (' + many(f.evidence.length, 'line') + ')'}),
                     el('pre', {text: f.evidence.join('\n')})));
    if (f.occ.length) {
      const b = el('button', {text: 'Show on the timeline'});
      b.addEventListener('click', () => {
        const o = f.occ.reduce((a, x) => (x[1] > a[1] ? x : a), f.occ[0]);
        const pad = Math.max(o[1] / 4, 1e6);
        TL.zoom(o[0] - pad, o[0] + o[1] + pad);
        document.getElementById('timeline').scrollIntoView();
      });
      card.append(b, el('span', {class: 'note', text: '  ' + many(f.occurrences, 'occurrence') +
          (f.occurrences > f.occ.length ? ', the longest ' + fmtCount(f.occ.length) + ' marked' : ' marked') + ' on the timeline'}));
    }
    box.append(card);
  });
}

// ===--- Timeline -------------------------------------------------------=== //
const LANE = 11, GAP = 3;
const OFF_COLORS = {S: '#8fb8ec', D: '#e06666', R: '#f6b26b', I: '#c9c9c9', T: '#b4a7d6', t: '#b4a7d6'};
function offColor(state) { return OFF_COLORS[S[state][0]] || '#999'; }
function sysColor(name) {
  if (/^(read|pread64|readv|preadv2?)$/.test(name)) return '#1c7ed6';
  if (/^(write|pwrite64|writev|pwritev2?)$/.test(name)) return '#9c36b5';
  if (/sync/.test(name)) return '#c92a2a';
  if (/^open/.test(name)) return '#0ca678';
  if (name === 'close') return '#868e96';
  return '#a0522d';
}
function blockColor(op) {
  const n = S[op];
  if (n === 'read') return '#339af0';
  if (n === 'write') return '#be4bdb';
  if (n === 'flush') return '#f76707';
  return '#868e96';
}
function lowerBound(items, t) {  // first index whose ts >= t
  let lo = 0, hi = items.length;
  while (lo < hi) { const m = (lo + hi) >> 1; if (items[m][0] < t) lo = m + 1; else hi = m; }
  return lo;
}
function maxDur(items) {
  if (items.maxDur === undefined) items.maxDur = items.reduce((a, x) => Math.max(a, x[1]), 0);
  return items.maxDur;
}

const TL = {
  rows: [], v0: 0, v1: 1, W: 0, H: 0, markers: 0, links: 0, dragX: null,
  init() {
    const r = D.run;
    this.span = Math.max(r.span_ns, 1);
    const start = Math.min(r.command_start_ts, this.span);
    this.home = [Math.max(0, start - (this.span - start) * 0.01), this.span];
    [this.v0, this.v1] = this.home;
    this.buildRows();
    this.canvas = document.getElementById('tl-canvas');
    this.axis = document.getElementById('tl-axis');
    this.box = document.getElementById('tl-canvas-box');
    this.tip = document.getElementById('tl-tip');
    this.bind();
    this.resize();
    window.addEventListener('resize', () => this.resize());
  },
  buildRows() {
    // Block requests of traced threads are also drawn on the thread's own row.
    const blkByTid = new Map();
    for (const d of D.devices) {
      for (const it of d.items) {
        const det = S[it[5]].split('\u001f');
        it.push(det, Number(det[3]));
        if (it[7]) {
          if (!blkByTid.has(it[7])) blkByTid.set(it[7], []);
          blkByTid.get(it[7]).push(it);
        }
      }
    }
    let threads = D.threads;
    const MAX_ROWS = 300;
    this.hiddenThreads = 0;
    if (threads.length > MAX_ROWS) {
      // Keep the busiest threads, in their original order.
      const busy = threads.map((t, i) => [t.sys_total[1] + t.off_total[1] + t.sys_total[0], i]).sort((a, b) => b[0] - a[0]);
      const keep = new Set(busy.slice(0, MAX_ROWS).map(x => x[1]));
      this.hiddenThreads = threads.length - MAX_ROWS;
      threads = threads.filter((t, i) => keep.has(i));
    }
    const labels = document.getElementById('tl-labels');
    let y = 0;
    for (const t of threads) {
      const h = 3 * LANE + 4 * GAP;
      const blk = blkByTid.get(t.tid) || [];
      blk.sort((a, b) => a[0] - b[0]);
      this.rows.push({kind: 'thread', t, y, h, blk});
      const who = t.process && t.process !== t.comm ? ' (' + t.process + ')' : '';
      labels.append(el('div', {class: 'tl-label', 'data-tid': String(t.tid), 'data-pid': String(t.pid),
                               style: 'height:' + h + 'px', title: t.comm + ' tid ' + t.tid + ' pid ' + t.pid},
                       t.comm + who, el('br'), el('small', {text: 'tid ' + t.tid + (t.tid === t.pid ? ' · main' : ' · pid ' + t.pid) +
                       ' · ' + many(t.sys_total[0], 'syscall') + ' · ' + fmtNs(t.off_total[1]) + ' off-CPU'})));
      y += h;
    }
    for (const d of D.devices) {
      const lanes = Math.max(1, Math.min(d.lanes, 8));
      const h = lanes * 7 + 2 * GAP + 8;
      this.rows.push({kind: 'dev', d, y, h, lanes});
      labels.append(el('div', {class: 'tl-label dev', 'data-dev': d.dev, style: 'height:' + h + 'px'},
                       'block ' + d.dev, el('small', {text: ' · ' + many(d.requests, 'request') + ' · ' + fmtBytes(d.bytes)})));
      y += h;
    }
    this.H = Math.max(y, 20);
    const note = document.getElementById('tl-note');
    const r = D.run, L = D.limits;
    const sysAll = D.threads.reduce((a, t) => a + t.sys_total[0], 0);
    const sysShown = D.threads.reduce((a, t) => a + t.sys.length, 0);
    const offAll = D.threads.reduce((a, t) => a + t.off_total[0], 0);
    const offShown = D.threads.reduce((a, t) => a + t.off.length, 0);
    const blkAll = D.devices.reduce((a, d) => a + d.rows, 0);
    const blkShown = D.devices.reduce((a, d) => a + d.shown, 0);
    let text = 'Times are since the collection started; the command was released at ' + fmtNs(r.command_start_ts) +
        '. Each thread has three lanes: CPU (green: on-CPU or off for less than ' + fmtNs(r.offcpu_min_ns) +
        ', coloured: off-CPU by state), its file syscalls (grey shading: how many calls fell in each stretch of time), and the block requests it issued. ' +
        'Drawn: ' + fmtCount(sysShown) + ' of ' + fmtCount(sysAll) + ' syscalls, ' + fmtCount(offShown) + ' of ' + fmtCount(offAll) +
        ' off-CPU intervals, ' + fmtCount(blkShown) + ' of ' + fmtCount(blkAll) + ' block requests';
    if (sysShown < sysAll || offShown < offAll || blkShown < blkAll)
      text += ' (the longest: at most ' + fmtCount(L.syscalls_per_thread) + ' syscalls and ' + fmtCount(L.offcpu_per_thread) +
          ' off-CPU intervals per thread, ' + fmtCount(L.block_requests) + ' block requests; the shading and the histograms count them all)';
    text += '. Intervals shorter than a pixel are drawn one pixel wide. Scroll to zoom, drag to pan, double-click to reset; hover for details.';
    if (this.hiddenThreads) text += ' ' + this.hiddenThreads + ' quieter threads are not drawn.';
    note.textContent = text;
    const lg = document.getElementById('tl-legend');
    const item = (c, t) => lg.append(el('i', {style: 'background:' + c}), t);
    item('#51cf66', 'on-CPU'); item(OFF_COLORS.S, 'off: sleeping'); item(OFF_COLORS.D, 'off: uninterruptible (I/O)');
    item(OFF_COLORS.R, 'off: preempted'); item(sysColor('read'), 'read'); item(sysColor('write'), 'write');
    item(sysColor('fsync'), 'sync'); item(sysColor('openat'), 'open'); item(blockColor(S.indexOf('read')), 'block read');
    item(blockColor(S.indexOf('write')), 'block write'); item(blockColor(S.indexOf('flush')), 'flush');
    if (D.findings.length) item('rgba(232,89,12,0.35)', 'finding (numbered as in Findings)');
  },
  resize() {
    const dpr = window.devicePixelRatio || 1;
    this.W = Math.max(200, this.box.clientWidth);
    for (const [c, h] of [[this.canvas, this.H], [this.axis, 26]]) {
      c.width = Math.round(this.W * dpr);
      c.height = Math.round(h * dpr);
      c.style.width = this.W + 'px';
      c.style.height = h + 'px';
      c.getContext('2d').setTransform(dpr, 0, 0, dpr, 0, 0);
    }
    this.draw();
  },
  x(t) { return (t - this.v0) * this.W / (this.v1 - this.v0); },
  t(x) { return this.v0 + x * (this.v1 - this.v0) / this.W; },
  zoom(a, b) {
    const minW = 1000;  // 1 µs
    if (b - a < minW) { const m = (a + b) / 2; a = m - minW / 2; b = m + minW / 2; }
    const w = b - a, lim = this.span * 1.02;
    if (w > lim) { a = this.home[0]; b = this.home[1]; }
    if (a < 0) { b -= a; a = 0; }
    if (b > lim) { a -= b - lim; b = lim; }
    this.v0 = Math.max(0, a); this.v1 = b;
    this.draw();
  },
  // Draws items [ts, dur, ...] sorted by ts into the lane at y..y+h.
  drawItems(ctx, items, y, h, color, laneOf) {
    if (!items.length) return;
    const k = this.W / (this.v1 - this.v0);
    let i = lowerBound(items, this.v0 - maxDur(items));
    let lastPx = -1, lastColor = '', lastLane = -1;
    for (; i < items.length && items[i][0] <= this.v1; ++i) {
      const it = items[i];
      const x0 = (it[0] - this.v0) * k;
      let x1 = (it[0] + it[1] - this.v0) * k;
      if (x1 < 0) continue;
      if (x1 - x0 < 1) x1 = x0 + 1;
      const c = color(it), lane = laneOf ? laneOf(it) : 0;
      const px = Math.floor(x0);
      if (x1 - x0 <= 1 && px === lastPx && c === lastColor && lane === lastLane) continue;  // that pixel is painted
      lastPx = px; lastColor = c; lastLane = lane;
      ctx.fillStyle = c;
      const ly = laneOf ? y + lane * 7 : y;
      ctx.fillRect(Math.max(x0, -1), ly, Math.min(x1, this.W + 1) - Math.max(x0, -1), h);
    }
  },
  draw() {
    const ctx = this.canvas.getContext('2d');
    ctx.clearRect(0, 0, this.W, this.H);
    ctx.font = '10px system-ui, sans-serif';
    const k = this.W / (this.v1 - this.v0);
    this.rows.forEach((row, n) => {
      if (n % 2) { ctx.fillStyle = '#fafbfc'; ctx.fillRect(0, row.y, this.W, row.h); }
      ctx.fillStyle = '#eef0f4';
      ctx.fillRect(0, row.y + row.h - 1, this.W, 1);
      if (row.kind === 'thread') {
        const t = row.t, yc = row.y + GAP, ys = yc + LANE + GAP, yb = ys + LANE + GAP;
        // On-CPU is the thread's lifetime minus its off-CPU intervals.
        const x0 = Math.max(this.x(t.start), 0), x1 = Math.min(this.x(t.end), this.W);
        if (x1 > x0) { ctx.fillStyle = '#51cf66'; ctx.fillRect(x0, yc + 2, Math.max(1, x1 - x0), LANE - 4); }
        this.drawItems(ctx, t.off, yc, LANE, it => offColor(it[2]));
        // Density of all syscalls (drawn or not), then the drawn ones.
        const B = t.density.length;
        if (B) {
          const peak = Math.max(...t.density);
          const o = D.run.bucket_origin_ns, bw = D.run.bucket_ns;
          for (let b = 0; b < B; ++b) {
            if (!t.density[b]) continue;
            const a = this.x(o + b * bw), z = this.x(o + (b + 1) * bw);
            if (z < 0 || a > this.W) continue;
            ctx.fillStyle = 'rgba(60,70,90,' + (0.06 + 0.22 * t.density[b] / peak).toFixed(3) + ')';
            ctx.fillRect(a, ys, Math.max(1, z - a), LANE);
          }
        }
        this.drawItems(ctx, t.sys, ys + 1, LANE - 2, it => sysColor(S[it[2]]));
        this.drawItems(ctx, row.blk, yb + 1, LANE - 2, it => blockColor(it[2]));
      } else {
        const lanes = row.lanes;
        this.drawItems(ctx, row.d.items, row.y + GAP + 4, 6, it => blockColor(it[2]), it => Math.min(it[4], lanes - 1));
      }
    });
    // The command's release.
    const xs = this.x(D.run.command_start_ts);
    if (xs >= 0 && xs <= this.W) {
      ctx.fillStyle = '#2458c6';
      ctx.fillRect(xs, 0, 1, this.H);
    }
    this.drawAxis(k);
    this.placeMarkers();
    document.getElementById('tl-range').textContent =
        'showing ' + fmtNs(this.v0) + ' – ' + fmtNs(this.v1) + ' (' + fmtNs(this.v1 - this.v0) + ')';
  },
  drawAxis(k) {
    const ctx = this.axis.getContext('2d');
    ctx.clearRect(0, 0, this.W, 26);
    ctx.fillStyle = '#5b6474';
    ctx.font = '11px system-ui, sans-serif';
    const want = (this.v1 - this.v0) * 110 / this.W;
    let step = Math.pow(10, Math.floor(Math.log10(want)));
    for (const m of [1, 2, 5, 10]) if (step * m >= want) { step *= m; break; }
    for (let t = Math.ceil(this.v0 / step) * step; t <= this.v1; t += step) {
      const x = (t - this.v0) * k;
      ctx.fillRect(x, 18, 1, 8);
      ctx.fillText(fmtNs(t), x + 3, 14);
    }
  },
  rowAt(y) { return this.rows.find(r => y >= r.y && y < r.y + r.h); },
  placeMarkers() {
    const box = document.getElementById('tl-markers');
    box.textContent = '';
    let placed = 0, links = 0;
    const MAX = 400;
    const rowOf = new Map(this.rows.filter(r => r.kind === 'thread').map(r => [r.t.tid, r]));
    D.findings.forEach((f, i) => {
      const color = FINDING_COLORS[i % FINDING_COLORS.length];
      let j = lowerBound(f.occ, this.v0 - maxDur(f.occ));
      for (; j < f.occ.length && f.occ[j][0] <= this.v1 && placed < MAX; ++j) {
        const [ts, dur, tid] = f.occ[j];
        const x0 = this.x(ts), x1 = this.x(ts + dur);
        if (x1 < 0) continue;
        const row = tid ? rowOf.get(tid) : null;
        const top = row ? row.y : 0, h = row ? row.h : this.H;
        const left = Math.max(x0, 0), w = Math.max(3, Math.min(x1, this.W) - left);
        const m = el('div', {class: 'occ', 'data-finding': String(i), 'data-tid': String(tid),
                             style: '--fc:' + color + ';left:' + left + 'px;top:' + top + 'px;width:' + w + 'px;height:' + h + 'px'});
        const flag = el('div', {class: 'occ-flag', text: String(i + 1),
                                title: f.title + '\n' + fmtNs(dur) + ' at ' + fmtNs(ts) + (tid ? ' on tid ' + tid : '')});
        flag.addEventListener('click', () => document.getElementById('finding-' + i).scrollIntoView());
        m.append(flag);
        box.append(m);
        ++placed;
      }
      // Wakeups on the way to the finding's root: an arrow from the thread
      // that woke to the thread it woke, at the moment it did.
      let k = lowerBound(f.links, this.v0);
      for (; k < f.links.length && f.links[k][0] <= this.v1 && links < MAX; ++k) {
        const [ts, from, to] = f.links[k];
        const a = rowOf.get(from), b = rowOf.get(to);
        if (!a || !b || a === b) continue;
        const down = a.y < b.y;
        const y0 = a.y + a.h / 2, y1 = b.y + b.h / 2;
        box.append(el('div', {class: 'wake ' + (down ? 'down' : 'up'), 'data-finding': String(i),
                              title: 'tid ' + from + ' woke tid ' + to + ' at ' + fmtNs(ts) + ' (' + f.title + ')',
                              style: '--fc:' + color + ';left:' + this.x(ts) + 'px;top:' + Math.min(y0, y1) +
                                     'px;height:' + Math.abs(y1 - y0) + 'px'}));
        ++links;
      }
    });
    this.markers = placed;
    this.links = links;
  },
  // What is under the pointer, as lines of text ('' for nothing).
  describe(px, py) {
    const row = this.rowAt(py);
    if (!row) return '';
    const t = this.t(px), tol = 3 * (this.v1 - this.v0) / this.W;
    const find = (items, lane) => {
      let best = null;
      for (let i = Math.min(lowerBound(items, t + tol), items.length) - 1, n = 0; i >= 0 && n < 400; --i, ++n) {
        const it = items[i];
        if (it[0] + it[1] + tol < t) { if (it[0] + maxDur(items) + tol < t) break; continue; }
        if (lane !== undefined && Math.min(it[4], row.lanes - 1) !== lane) continue;
        if (!best || it[1] > best[1]) best = it;
      }
      return best;
    };
    const blockText = it => {
      const det = it[6];
      return 'block ' + S[it[2]] + ' ' + fmtBytes(it[3]) + ' · ' + fmtNs(it[1]) + '\nat ' + fmtNs(it[0]) +
          '\nfor: ' + det[0] + (det[1] ? '\nfile: ' + det[1] : '') + (Number(det[2]) & 512 ? '\n(partial completion)' : '');
    };
    if (row.kind === 'dev') {
      const lane = Math.floor((py - row.y - GAP - 4) / 7);
      const it = find(row.d.items, Math.max(0, Math.min(lane, row.lanes - 1)));
      return it ? 'device ' + row.d.dev + '\n' + blockText(it) : '';
    }
    const th = row.t, off = py - row.y - GAP;
    const lane = Math.floor(off / (LANE + GAP));
    const head = th.comm + ' (tid ' + th.tid + ', pid ' + th.pid + ')\n';
    if (lane <= 0) {
      const it = find(th.off);
      if (it) return head + 'off-CPU ' + fmtNs(it[1]) + ': ' + S[it[2]] + '\nat ' + fmtNs(it[0]) + '\nwoken by: ' + S[it[3]];
      if (t >= th.start && t <= th.end) return head + 'on-CPU (or off-CPU for less than ' + fmtNs(D.run.offcpu_min_ns) + ') at ' + fmtNs(t);
      return '';
    }
    if (lane === 1) {
      const it = find(th.sys);
      const B = th.density.length, b = Math.floor((t - D.run.bucket_origin_ns) / D.run.bucket_ns);
      const dens = b >= 0 && b < B ? '\n' + fmtCount(th.density[b]) + ' syscalls started in the ' + fmtNs(D.run.bucket_ns) + ' around here' : '';
      if (!it) return dens ? head + dens.slice(1) : '';
      const name = S[it[2]], ret = it[4];
      const res = ret < 0 ? 'error ' + (-ret) : /read|write/.test(name) ? fmtBytes(ret) : 'returned ' + ret;
      return head + name + ' ' + fmtNs(it[1]) + ' · ' + res + (it[5] >= 0 ? ' at offset ' + fmtCount(it[5]) : '') +
          '\nfile: ' + S[it[3]] + '\nat ' + fmtNs(it[0]) + dens;
    }
    const it = find(row.blk);
    return it ? head + blockText(it) : '';
  },
  bind() {
    const box = this.box;
    box.addEventListener('wheel', e => {
      e.preventDefault();
      const r = box.getBoundingClientRect();
      const t = this.t(e.clientX - r.left), f = Math.exp(e.deltaY * 0.002);
      this.zoom(t - (t - this.v0) * f, t + (this.v1 - t) * f);
    }, {passive: false});
    box.addEventListener('mousedown', e => { this.dragX = e.clientX; box.style.cursor = 'grabbing'; });
    window.addEventListener('mouseup', () => { this.dragX = null; box.style.cursor = ''; });
    box.addEventListener('mousemove', e => {
      const r = box.getBoundingClientRect();
      if (this.dragX !== null) {
        const dt = (e.clientX - this.dragX) * (this.v1 - this.v0) / this.W;
        this.dragX = e.clientX;
        this.tip.style.display = 'none';
        this.zoom(this.v0 - dt, this.v1 - dt);
        return;
      }
      const text = this.describe(e.clientX - r.left, e.clientY - r.top);
      if (!text) { this.tip.style.display = 'none'; return; }
      this.tip.textContent = text;
      this.tip.style.display = 'block';
      this.tip.style.left = Math.min(e.clientX + 14, window.innerWidth - 360) + 'px';
      this.tip.style.top = (e.clientY + 14) + 'px';
    });
    box.addEventListener('mouseleave', () => { this.tip.style.display = 'none'; });
    box.addEventListener('dblclick', () => this.zoom(...this.home));
    document.getElementById('tl-reset').addEventListener('click', () => this.zoom(...this.home));
    const by = f => () => { const m = (this.v0 + this.v1) / 2, w = (this.v1 - this.v0) * f / 2; this.zoom(m - w, m + w); };
    document.getElementById('tl-in').addEventListener('click', by(0.5));
    document.getElementById('tl-out').addEventListener('click', by(2));
  },
};

// ===--- Latency histograms ---------------------------------------------=== //
// One log2 histogram: buckets [[lo_ns, hi_ns, count]], gaps filled with zeros.
function histChart(title, sub, buckets) {
  const bySlot = new Map();
  for (const [, hi, n] of buckets) {
    const slot = Math.round(Math.log2(hi)) - 1;
    bySlot.set(slot, (bySlot.get(slot) || 0) + n);
  }
  const slots = [...bySlot.keys()];
  let s0 = Math.min(...slots), s1 = Math.max(...slots);
  // At least 8 buckets, so that one full bucket reads as a bar on a scale.
  while (s1 - s0 < 7) { if (s0 > 0) --s0; if (s1 - s0 < 7) ++s1; }
  const W = 380, H = 160, L = 44, B = 34, T = 8, R = 6;
  const n = s1 - s0 + 1, bw = (W - L - R) / n;
  const peak = Math.max(...bySlot.values());
  const svg = sv('svg', {viewBox: '0 0 ' + W + ' ' + H, width: W, height: H, class: 'hist'});
  svg.append(sv('line', {x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#9aa3b2'}));
  svg.append(sv('text', {x: L - 4, y: T + 9, 'text-anchor': 'end', 'font-size': 10, fill: '#5b6474'}, fmtCount(peak)));
  svg.append(sv('text', {x: L - 4, y: H - B, 'text-anchor': 'end', 'font-size': 10, fill: '#5b6474'}, '0'));
  const every = Math.max(1, Math.ceil(n / 8));
  for (let s = s0; s <= s1; ++s) {
    const c = bySlot.get(s) || 0, x = L + (s - s0) * bw, h = peak ? (H - B - T) * c / peak : 0;
    const lo = s ? Math.pow(2, s) : 0, hi = Math.pow(2, s + 1);
    const g = sv('g', {});
    g.append(sv('title', {}, fmtNs(lo) + ' – ' + fmtNs(hi) + ': ' + fmtCount(c)));
    g.append(sv('rect', {x: x + 0.5, y: H - B - h, width: Math.max(1, bw - 1), height: Math.max(h, c ? 1 : 0), fill: '#4c6ef5'}));
    g.append(sv('rect', {x: x, y: T, width: bw, height: H - B - T, fill: 'transparent'}));
    svg.append(g);
    if ((s - s0) % every === 0)
      svg.append(sv('text', {x: x + bw / 2, y: H - B + 13, 'text-anchor': 'middle', 'font-size': 9.5, fill: '#5b6474'}, fmtNs(lo)));
  }
  svg.append(sv('text', {x: (L + W) / 2, y: H - 4, 'text-anchor': 'middle', 'font-size': 10, fill: '#5b6474'}, 'latency (log2 buckets; bar = count)'));
  return el('figure', {class: 'chart'}, el('figcaption', {}, title, ' ', el('small', {text: sub})), svg);
}
function renderHistograms() {
  const bh = document.getElementById('block-hist');
  if (!D.block_hist.length)
    bh.append(el('p', {class: 'empty', text: D.block_hist_note || 'No block latency histograms in this run: the block probe group saw no request complete.'}));
  for (const h of D.block_hist)
    bh.append(histChart('block ' + h.dev + ' ' + h.op, many(h.count, 'request') + ', mean ' + fmtNs(h.count ? h.sum_ns / h.count : 0), h.buckets));
  const sh = document.getElementById('sys-hist');
  if (!D.sys_hist.length) sh.append(el('p', {class: 'empty', text: 'No file syscalls recorded in this run.'}));
  const shown = D.sys_hist.slice(0, 9);
  for (const h of shown)
    sh.append(histChart(h.name, many(h.count, 'call') + ', total ' + fmtNs(h.total_ns) + ', worst ' + fmtNs(h.worst_ns), h.buckets));
  if (D.sys_hist.length > shown.length)
    sh.append(el('p', {class: 'note', text: (D.sys_hist.length - shown.length) + ' more syscalls with less total time are not drawn.'}));
}

// ===--- Top files ------------------------------------------------------=== //
function table(cols, rows) {
  const t = el('table', {class: 'data'});
  t.append(el('tr', {}, ...cols.map(c => el('th', {class: c[1] ? 'l' : '', text: c[0]}))));
  for (const r of rows) t.append(el('tr', {}, ...r.map((v, i) => el('td', {class: cols[i][1] ? 'l' : '', text: v}))));
  return t;
}
function renderFiles() {
  const box = document.getElementById('files-body');
  if (!D.files.length) { box.append(el('p', {class: 'empty', text: 'No file I/O on regular files recorded in this run.'})); return; }
  box.append(table([['path', 1], ['reads'], ['read'], ['writes'], ['written'], ['syncs'], ['total latency'], ['worst'], ['worst in', 1]],
      D.files.map(f => [f.path, fmtCount(f.reads), fmtBytes(f.read_bytes), fmtCount(f.writes), fmtBytes(f.write_bytes),
                        fmtCount(f.syncs), fmtNs(f.total_ns), fmtNs(f.worst_ns), f.worst_syscall])));
}

// ===--- Page cache -----------------------------------------------------=== //
function renderPageCache() {
  const box = document.getElementById('pc-body');
  const P = D.pagecache;
  if (P.note) { box.append(el('p', {class: 'empty', text: P.note})); return; }
  const sum = a => a.reduce((x, y) => x + y, 0);
  const add = sum(P.added), del = sum(P.deleted), ref = sum(P.refaulted);
  box.append(el('div', {class: 'note', text: 'Pages (4 KiB) added to and deleted from the page cache for the files the traced programs used, per ' +
      fmtNs(D.run.bucket_ns) + ', from the command\'s start. Above the line: added (orange: refaults, pages read again after they had been dropped); below: deleted. Totals: ' +
      fmtCount(add) + ' added (' + fmtBytes(add * 4096) + '), ' + fmtCount(del) + ' deleted, ' +
      (P.has_refaults ? fmtCount(ref) + ' refaulted.' : 'refaults not available in this database.')}));
  const B = P.added.length, W = 1000, H = 240, L = 56, T = 10, Bt = 26, mid = T + (H - T - Bt) / 2;
  const peak = Math.max(1, ...P.added, ...P.deleted);
  const sy = (mid - T) / peak, bw = (W - L - 6) / B;
  const svg = sv('svg', {viewBox: '0 0 ' + W + ' ' + H, width: '100%', style: 'max-width:1200px', class: 'pc-chart'});
  svg.append(sv('line', {x1: L, y1: mid, x2: W - 6, y2: mid, stroke: '#9aa3b2'}));
  const lbl = (y, t) => svg.append(sv('text', {x: L - 4, y: y + 3, 'text-anchor': 'end', 'font-size': 10, fill: '#5b6474'}, t));
  lbl(T + 4, '+' + fmtCount(peak)); lbl(mid, '0'); lbl(H - Bt - 4, '−' + fmtCount(peak));
  for (let b = 0; b < B; ++b) {
    const x = L + b * bw, a = P.added[b], d = P.deleted[b], r = P.refaulted[b];
    if (!a && !d) continue;
    const g = sv('g', {});
    g.append(sv('title', {}, fmtNs(D.run.bucket_origin_ns + b * D.run.bucket_ns) + ': +' + fmtCount(a) + ' added, −' + fmtCount(d) + ' deleted, ' + fmtCount(r) + ' refaulted'));
    if (a) g.append(sv('rect', {x, y: mid - a * sy, width: Math.max(bw, 1), height: Math.max(1, a * sy), fill: '#5c7cfa'}));
    if (r) g.append(sv('rect', {x, y: mid - Math.min(r, a || r) * sy, width: Math.max(bw, 1), height: Math.max(1, Math.min(r, a || r) * sy), fill: '#fd7e14'}));
    if (d) g.append(sv('rect', {x, y: mid, width: Math.max(bw, 1), height: Math.max(1, d * sy), fill: '#fa5252'}));
    svg.append(g);
  }
  const span = B * D.run.bucket_ns;
  for (let i = 0; i <= 5; ++i)
    svg.append(sv('text', {x: L + (W - L - 6) * i / 5, y: H - 8, 'text-anchor': i ? (i === 5 ? 'end' : 'middle') : 'start', 'font-size': 10, fill: '#5b6474'},
                  fmtNs(D.run.bucket_origin_ns + span * i / 5)));
  box.append(svg);
  box.append(el('h3', {style: 'font-size:14px;margin:10px 0 2px', text: 'Files with the most churn'}));
  box.append(table([['file', 1], ['pages added'], ['deleted'], ['refaulted'], ['refaulted bytes']],
      P.files.map(f => [f.path, fmtCount(f.added), fmtCount(f.deleted), P.has_refaults ? fmtCount(f.refaulted) : '–', fmtBytes(f.refaulted * 4096)])));
  if (P.deleters.length) {
    box.append(el('h3', {style: 'font-size:14px;margin:10px 0 2px', text: 'Who deleted pages'}));
    box.append(el('div', {class: 'note', text: 'The task that ran the deletion: kswapd is background reclaim; kdamond is DAMON\'s proactive reclaim (pages it saw idle, with no limit hit); a traced program here hit its memory cgroup\'s limit or truncated a file.'}));
    box.append(table([['task', 1], ['pages deleted']], P.deleters.map(([c, n]) => [c, fmtCount(n)])));
  }
}

// ===--- File access order ----------------------------------------------=== //
const ACCESS_KINDS = [['page fault', '#5c7cfa'], ['read', '#2f9e44'], ['added to the cache (readahead)', '#ced4da']];
function renderAccess() {
  const box = document.getElementById('access-body');
  const A = D.access;
  if (A.note) { box.append(el('p', {class: 'empty', text: A.note})); return; }
  box.append(el('div', {class: 'note', text: 'Where in each file the run\'s touches landed, and when (from the command\'s ' +
      'start): the order a prefetch plan (syspgo optimize --emit plan) replays. Scattered dots are a file paged in at ' +
      'random; a rising line is one read in order. Files with the most pages used first, on one time axis.'}));
  const legend = el('div', {class: 'note'});
  for (const [name, colour] of ACCESS_KINDS)
    legend.append(el('span', {style: 'display:inline-block;width:10px;height:10px;margin:0 4px 0 12px;background:' + colour}), name);
  box.append(legend);
  let tmax = 1;
  for (const f of A.files) for (const p of f.points) tmax = Math.max(tmax, p[0]);
  for (const f of A.files) {
    const W = 1000, H = 150, L = 64, T = 6, Bt = 20;
    const sx = (W - L - 6) / tmax, sy = (H - T - Bt) / Math.max(1, f.size);
    box.append(el('h3', {style: 'font-size:13px;margin:10px 0 2px', text: f.path + ' · ' + fmtBytes(f.size) + ', ' +
        fmtBytes(f.used_pages * 4096) + ' of it used, ' + fmtCount(f.touches) + (f.touches === 1 ? ' touch' : ' touches') +
        (f.shown < f.touches ? ' (' + fmtCount(f.shown) + ' drawn, evenly spaced)' : '')}));
    const svg = sv('svg', {viewBox: '0 0 ' + W + ' ' + H, width: '100%', style: 'max-width:1200px', class: 'access-chart'});
    svg.append(sv('rect', {x: L, y: T, width: W - L - 6, height: H - T - Bt, fill: 'none', stroke: '#dfe3ea'}));
    const lbl = (y, t) => svg.append(sv('text', {x: L - 4, y: y + 3, 'text-anchor': 'end', 'font-size': 10, fill: '#5b6474'}, t));
    lbl(T + 4, '0'); lbl(H - Bt - 2, fmtBytes(f.size));
    for (let i = 0; i <= 4; ++i)
      svg.append(sv('text', {x: L + (W - L - 6) * i / 4, y: H - 6, 'text-anchor': i ? (i === 4 ? 'end' : 'middle') : 'start', 'font-size': 10, fill: '#5b6474'},
                    fmtNs(tmax * i / 4)));
    // Cache additions first, so the touches are drawn over them.
    for (const kind of [2, 1, 0])
      for (const [ts, off, len, k] of f.points) {
        if (k !== kind) continue;
        const r = sv('rect', {x: L + ts * sx, y: T + off * sy, width: 2, height: Math.max(1.5, len * sy), fill: ACCESS_KINDS[k][1], class: 'ac-pt'});
        r.append(sv('title', {}, ACCESS_KINDS[k][0] + ' at ' + fmtNs(ts) + ': ' + fmtBytes(len) + ' at offset ' + fmtBytes(off)));
        svg.append(r);
      }
    box.append(svg);
  }
}

// ===--- Flame graph ----------------------------------------------------=== //
const FL = {
  init() {
    const F = D.flame;
    const note = document.getElementById('flame-note');
    if (F.note) { note.textContent = 'No flame graph: ' + F.note; document.getElementById('flame-reset').hidden = true; return; }
    note.textContent = fmtCount(F.samples) + ' CPU samples' + (F.period_ns ? ' (one per ' + fmtNs(F.period_ns) + ' of CPU time)' : '') +
        ', root at the bottom: each box is a function, as wide as its share of the samples; the one above it is what it called ' +
        '(kernel frames in blue, after the user code that entered the kernel). Click a box to zoom in. ' +
        (F.omitted ? F.omitted + ' frames with fewer than ' + fmtCount(F.min_samples) + ' samples are left out.' : '');
    for (const p of F.problems) note.append(el('div', {text: 'Not symbolized: ' + p}));
    this.root = F.tree;
    document.getElementById('flame-reset').addEventListener('click', () => this.draw(F.tree, []));
    this.draw(F.tree, []);
  },
  depth(n) { let d = 0; for (const c of n[3]) d = Math.max(d, this.depth(c)); return d + 1; },
  draw(node, path) {
    const box = document.getElementById('flame-box');
    box.textContent = '';
    document.getElementById('flame-path').textContent = path.length ? 'zoomed into ' + path.join(' → ') : '';
    const W = 1200, RH = 17, H = this.depth(node) * RH + 4;
    const svg = sv('svg', {viewBox: '0 0 ' + W + ' ' + H, width: '100%', class: 'flame'});
    const total = node[1];
    const colour = kind => name => kind === 3 ? 'hsl(' + hashHue(name, 195, 35) + ',55%,68%)' :
        kind === 1 ? 'hsl(270,35%,72%)' : kind === 0 ? '#c8ccd4' : 'hsl(' + hashHue(name, 8, 42) + ',78%,62%)';
    const walk = (n, x, d, trail) => {
      const w = n[1] / total * W;
      if (w < 0.3) return;
      const y = H - (d + 1) * RH;
      const g = sv('g', {class: 'fr'});
      g.append(sv('title', {}, n[0] + '\n' + fmtCount(n[1]) + ' samples (' + pct(n[1] / this.root[1]) + ' of all)'));
      g.append(sv('rect', {x: x + 0.2, y, width: Math.max(0.3, w - 0.4), height: RH - 1, rx: 1.5, fill: colour(n[2])(n[0])}));
      const chars = Math.floor((w - 6) / 6.4);
      if (chars >= 3)
        g.append(sv('text', {x: x + 3, y: y + 12, 'font-size': 11, fill: '#1d2330'}, n[0].length > chars ? n[0].slice(0, chars - 1) + '…' : n[0]));
      const here = trail.concat([n[0]]);
      g.addEventListener('click', () => this.draw(n, here));
      svg.append(g);
      let cx = x;
      for (const c of n[3]) { walk(c, cx, d + 1, here); cx += c[1] / total * W; }
    };
    walk(node, 0, 0, path.slice(0, -1));
    box.append(svg);
  },
};

panel('run-meta', renderHeader);
panel('findings-body', renderFindings);
panel('tl', () => TL.init());
panel('block-hist', renderHistograms);
panel('files-body', renderFiles);
panel('pc-body', renderPageCache);
panel('access-body', renderAccess);
panel('flame-box', () => FL.init());
{
  const st = document.getElementById('report-status');
  st.dataset.threads = String(TL.rows.filter(r => r.kind === 'thread').length);
  st.dataset.devices = String(TL.rows.filter(r => r.kind === 'dev').length);
  st.dataset.findings = String(D.findings.length);
  st.dataset.markers = String(TL.markers);
  st.dataset.wakeLinks = String(TL.links);
  st.dataset.flameFrames = String(document.querySelectorAll('#flame-box .fr').length);
  st.dataset.accessCharts = String(document.querySelectorAll('#access-body .access-chart').length);
  st.dataset.accessPoints = String(document.querySelectorAll('#access-body .ac-pt').length);
  if (!window.syspgoErrors.length) st.dataset.state = 'ok';
  st.textContent = 'report drawn: ' + st.dataset.state;
}
