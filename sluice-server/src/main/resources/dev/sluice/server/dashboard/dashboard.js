// The dashboard: polls dashboard/data every second, turns the request counters into rates (the change of a counter
// between two polls over the service's time between them), keeps five minutes of them, and draws two SVG charts:
// denied per client, and allowed per client against the rule's limit. No library, no network beyond the service.
//
// A series is one value of a detailed_metric rule (a client id), or a rule as a whole. "Denied" counts the outcomes
// denied, shadow_banned and would_deny (a dry-run rule's refusals, drawn dashed); "allowed" counts allowed and
// unlimited. The busiest series (allowed + denied over the kept history) are drawn, at most MAX_SERIES of them.
//
// For tests and tools, each chart's <svg> carries data-state ("empty" or "data"); each line data-series (its key),
// data-client, data-rule, data-points (how many rates it has) and data-max (its largest rate, requests/s); each limit
// line data-limit (domain.rule#limit) and data-rate (requests/s). <body data-polls> counts the answered polls.
'use strict';

(function () {
  const POLL_MS = 1000;
  const HISTORY_MS = 5 * 60 * 1000;
  const RECENT_MS = 10 * 1000;
  const MAX_SERIES = 8;
  const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
  const SVG = 'http://www.w3.org/2000/svg';
  const W = 860, H = 250, M = { left: 58, right: 14, top: 14, bottom: 40 };

  let previous = null; // the last answer: {time, counts: Map key -> {allowed, denied}}
  const history = new Map(); // key -> [{t, allowed, denied, n}] rates in requests/s, n the requests in the step
  const meta = new Map(); // key -> {domain, rule, value}
  let rules = new Map(); // "domain\u0000rule" -> rule of the configuration in force
  let polls = 0;

  function keyOf(s) {
    return s.domain + '\u0000' + s.rule + '\u0000' + (s.value === undefined ? '' : '\u0001' + s.value);
  }

  function sum(counts, outcomes) {
    let n = 0;
    for (const o of outcomes) {
      n += counts[o] || 0;
    }
    return n;
  }

  function take(data) {
    rules = new Map(data.rules.map(r => [r.domain + '\u0000' + r.rule, r]));
    const counts = new Map();
    for (const s of data.series) {
      const key = keyOf(s);
      meta.set(key, { domain: s.domain, rule: s.rule, value: s.value });
      counts.set(key, {
        allowed: sum(s.counts, ['allowed', 'unlimited']),
        denied: sum(s.counts, ['denied', 'shadow_banned', 'would_deny'])
      });
    }
    const now = data.time;
    if (previous !== null && now > previous.time) {
      const seconds = (now - previous.time) / 1000;
      for (const [key, c] of counts) {
        const p = previous.counts.get(key) || { allowed: 0, denied: 0 };
        // a counter that went down belongs to a restarted service: count from zero
        const allowed = c.allowed >= p.allowed ? c.allowed - p.allowed : c.allowed;
        const denied = c.denied >= p.denied ? c.denied - p.denied : c.denied;
        let h = history.get(key);
        if (h === undefined) {
          h = [];
          history.set(key, h);
        }
        h.push({ t: now, allowed: allowed / seconds, denied: denied / seconds, n: allowed + denied });
      }
    }
    for (const [key, h] of history) {
      while (h.length > 0 && h[0].t < now - HISTORY_MS) {
        h.shift();
      }
      if (h.length === 0) {
        history.delete(key);
      }
    }
    previous = { time: now, counts: counts };
  }

  function ruleOf(key) {
    const m = meta.get(key);
    return rules.get(m.domain + '\u0000' + m.rule);
  }

  // a client id, or a rule's path for a rule counted as a whole; withRule: "acme · client_id", "rule (all values)"
  function label(key, withRule) {
    const m = meta.get(key);
    if (m.value === undefined) {
      return withRule ? m.rule + ' (all values)' : m.rule;
    }
    return withRule ? m.value + ' · ' + m.rule : m.value;
  }

  function total(h, field) {
    let n = 0;
    for (const p of h) {
      n += field === undefined ? p.n : p[field];
    }
    return n;
  }

  function recent(h, field, now) {
    let n = 0, count = 0;
    for (const p of h) {
      if (p.t > now - RECENT_MS) {
        n += p[field];
        count++;
      }
    }
    return count === 0 ? 0 : n / count;
  }

  function el(name, attrs, parent) {
    const e = document.createElementNS(SVG, name);
    for (const a in attrs) {
      e.setAttribute(a, attrs[a]);
    }
    if (parent) {
      parent.appendChild(e);
    }
    return e;
  }

  function text(parent, x, y, s, attrs) {
    const t = el('text', Object.assign({ x: x, y: y }, attrs || {}), parent);
    t.textContent = s;
    return t;
  }

  function niceStep(max, ticks) {
    const raw = max / ticks;
    const mag = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 2.5, 5, 10]) {
      if (m * mag >= raw) {
        return m * mag;
      }
    }
    return 10 * mag;
  }

  function rate(v) {
    if (v === 0) {
      return '0';
    }
    return v < 10 ? v.toFixed(1) : String(Math.round(v));
  }

  function count(n) {
    return n >= 1e6 && n % 1e5 === 0 ? n / 1e6 + 'M' : n >= 1e4 && n % 100 === 0 ? n / 1e3 + 'k' : String(n);
  }

  function windowName(seconds) {
    const units = [[86400, 'd'], [3600, 'h'], [60, 'min'], [1, 's']];
    for (const [s, name] of units) {
      if (seconds >= s && seconds % s === 0) {
        return seconds === s ? name : seconds / s + name;
      }
    }
    return seconds + 's';
  }

  function limitLabel(r, l) {
    const perSecond = l.requests / l.windowSeconds;
    let s = r.rule + ': ' + count(l.requests) + '/' + windowName(l.windowSeconds);
    if (l.windowSeconds !== 1) {
      s += ' (' + rate(perSecond) + '/s)';
    }
    return r.mode === 'dry_run' ? s + ', dry run' : s;
  }

  // Draws one chart: lines [{key, label, color, dashed, points: [{t, v}]}], limit lines [{id, rate, label}].
  function draw(svg, lines, limits, t0, t1, emptyText) {
    while (svg.firstChild) {
      svg.removeChild(svg.firstChild);
    }
    const pw = W - M.left - M.right, ph = H - M.top - M.bottom;
    let max = 0;
    for (const l of lines) {
      for (const p of l.points) {
        max = Math.max(max, p.v);
      }
    }
    // A limit far above the traffic (500/s over 5/s) would flatten every line: it is left off the scale, and named
    // at the top of the chart instead.
    const dataMax = max;
    const onScale = limits.filter(l => dataMax === 0 || l.rate <= 10 * dataMax);
    const above = limits.filter(l => !onScale.includes(l));
    for (const l of onScale) {
      max = Math.max(max, l.rate);
    }
    const step = niceStep(max > 0 ? max * 1.08 : 1, 4);
    const top = Math.max(step, Math.ceil((max * 1.08) / step) * step);
    const x = t => M.left + ((t - t0) / (t1 - t0)) * pw;
    const y = v => M.top + ph - (v / top) * ph;

    const axis = el('g', { class: 'axis' }, svg);
    for (let v = 0; v <= top + step / 2; v += step) {
      el('line', { class: 'grid', x1: M.left, x2: M.left + pw, y1: y(v), y2: y(v) }, axis);
      text(axis, M.left - 6, y(v) + 4, Number.isInteger(step) ? String(Math.round(v)) : rate(v),
        { 'text-anchor': 'end' });
    }
    const span = (t1 - t0) / 1000;
    let tick = 10;
    for (const s of [10, 15, 30, 60]) {
      tick = s;
      if (span / s <= 6) {
        break;
      }
    }
    for (let s = 0; s <= span + 0.001; s += tick) {
      const tx = x(t1 - s * 1000);
      el('line', { x1: tx, x2: tx, y1: M.top + ph, y2: M.top + ph + 4 }, axis);
      const name = s === 0 ? 'now' : '−' + (s % 60 === 0 ? s / 60 + ' min' : s + ' s');
      text(axis, tx, M.top + ph + 16, name, { 'text-anchor': 'middle' });
    }
    el('line', { x1: M.left, x2: M.left + pw, y1: M.top + ph, y2: M.top + ph }, axis);
    el('line', { x1: M.left, x2: M.left, y1: M.top, y2: M.top + ph }, axis);
    text(axis, 14, M.top + ph / 2, 'requests/s',
      { transform: 'rotate(-90 14 ' + (M.top + ph / 2) + ')', 'text-anchor': 'middle' });
    text(axis, M.left + pw / 2, H - 4, 'time, before the latest poll', { 'text-anchor': 'middle' });

    const labels = new Map(); // rate -> the labels of the limits at that rate, drawn as one line's label
    for (const l of onScale) {
      el('line', {
        class: 'limit', x1: M.left, x2: M.left + pw, y1: y(l.rate), y2: y(l.rate),
        'data-limit': l.id, 'data-rate': l.rate
      }, svg);
      labels.set(l.rate, (labels.has(l.rate) ? labels.get(l.rate) + '; ' : '') + l.label);
    }
    // labels from the highest line down, each at least a line of text below the one before
    let lastY = -Infinity;
    for (const [r, s] of [...labels.entries()].sort((a, b) => b[0] - a[0])) {
      // above its line, or below it when the label before is in the way
      const ly = y(r) - 5 >= lastY + 13 ? y(r) - 5 : Math.max(y(r) + 13, lastY + 13);
      text(svg, M.left + 6, ly, 'limit ' + s, { class: 'limit-label' });
      lastY = ly;
    }
    if (above.length > 0) {
      const t = text(svg, M.left + pw - 4, M.top + 10, '▲ above the chart: limit '
        + above.map(l => l.label).join('; '), { class: 'limit-label', 'text-anchor': 'end' });
      t.setAttribute('data-limits-above', above.map(l => l.id).join(' '));
    }
    for (const l of lines) {
      const pts = l.points.map(p => x(p.t).toFixed(1) + ',' + y(p.v).toFixed(1)).join(' ');
      const line = el('polyline', {
        class: 'series', points: pts, stroke: l.color,
        'data-series': l.key, 'data-client': l.client, 'data-rule': l.rule,
        'data-points': l.points.length, 'data-max': Math.max(0, ...l.points.map(p => p.v))
      }, svg);
      if (l.dashed) {
        line.setAttribute('stroke-dasharray', '5 3');
      }
      const title = el('title', {}, line);
      title.textContent = l.label;
    }
    svg.setAttribute('data-state', lines.length > 0 ? 'data' : 'empty');
    if (lines.length === 0) {
      text(svg, M.left + pw / 2, M.top + ph / 2, emptyText, { class: 'empty', 'text-anchor': 'middle' });
    }
  }

  function render() {
    const now = previous === null ? Date.now() : previous.time;
    let oldest = now;
    for (const h of history.values()) {
      oldest = Math.min(oldest, h[0].t);
    }
    // the time axis grows with the history, from one minute to five
    const t1 = now, t0 = now - Math.min(HISTORY_MS, Math.max(60 * 1000, now - oldest));

    const busy = [...history.entries()].filter(([, h]) => total(h) > 0);
    busy.sort((a, b) => total(b[1]) - total(a[1]));
    const shown = busy.slice(0, MAX_SERIES).map(([key]) => key);
    const manyRules = new Set(shown.map(k => meta.get(k).domain + '\u0000' + meta.get(k).rule)).size > 1;
    const manyDomains = new Set(shown.map(k => meta.get(k).domain)).size > 1;
    const color = new Map(shown.map((k, i) => [k, COLORS[i % COLORS.length]]));

    function lines(field) {
      return shown.filter(k => total(history.get(k), field) > 0).map(k => {
        const r = ruleOf(k);
        return {
          key: k.replace(/\u0000\u0001?/g, '/'), label: label(k, manyRules), color: color.get(k),
          client: meta.get(k).value === undefined ? '' : meta.get(k).value, rule: meta.get(k).rule,
          dashed: field === 'denied' && r !== undefined && r.mode === 'dry_run',
          points: history.get(k).map(p => ({ t: p.t, v: p[field] }))
        };
      });
    }

    const noTraffic = previous === null || previous.counts.size === 0 ? 'no traffic yet'
      : 'no traffic in the last 5 minutes';
    const allowedLines = lines('allowed');
    const limits = [];
    const seen = new Set();
    for (const k of shown) {
      const r = ruleOf(k);
      if (r === undefined || seen.has(r.domain + '.' + r.rule) || total(history.get(k), 'allowed') === 0) {
        continue;
      }
      seen.add(r.domain + '.' + r.rule);
      for (const l of r.limits) {
        limits.push({ id: r.domain + '.' + r.rule + '#' + l.name, rate: l.requests / l.windowSeconds,
          label: limitLabel(r, l) });
      }
    }
    draw(document.getElementById('denied'), lines('denied'), [], t0, t1,
      busy.length === 0 ? noTraffic : 'nothing denied in the last 5 minutes');
    draw(document.getElementById('allowed'), allowedLines, limits, t0, t1,
      busy.length === 0 ? noTraffic : 'nothing allowed in the last 5 minutes');
    legend(shown, busy.length, color, manyDomains, now);
  }

  function legend(shown, busy, color, manyDomains, now) {
    const body = document.querySelector('#legend tbody');
    while (body.firstChild) {
      body.removeChild(body.firstChild);
    }
    for (const k of shown) {
      const h = history.get(k);
      const r = ruleOf(k);
      const tr = document.createElement('tr');
      const cell = (s, cls) => {
        const td = document.createElement('td');
        if (cls) {
          td.className = cls;
        }
        td.textContent = s;
        tr.appendChild(td);
        return td;
      };
      const swatch = document.createElement('span');
      swatch.className = 'swatch';
      swatch.style.background = color.get(k);
      cell('').appendChild(swatch);
      const who = cell(label(k, false), 'client');
      const small = document.createElement('small');
      small.textContent = (manyDomains ? meta.get(k).domain + ' · ' : '')
        + (meta.get(k).value === undefined ? 'all values' : meta.get(k).rule)
        + (r !== undefined && r.mode !== 'enforce' ? ' · ' + r.mode.replace('_', ' ') : '');
      who.appendChild(small);
      cell(rate(recent(h, 'allowed', now)), 'n');
      cell(rate(recent(h, 'denied', now)), 'n');
      const limit = cell('', 'n');
      const limitText = r === undefined ? [] : r.unlimited ? ['unlimited']
        : r.limits.map(l => count(l.requests) + '/' + windowName(l.windowSeconds));
      limitText.forEach((t, i) => {
        if (i > 0) {
          limit.appendChild(document.createElement('br'));
        }
        limit.appendChild(document.createTextNode(t));
      });
      body.appendChild(tr);
    }
    document.getElementById('shown').textContent = busy === 0 ? 'none with traffic in the last 5 minutes'
      : busy > shown.length ? 'the ' + shown.length + ' busiest of ' + busy + ', over the last 5 minutes'
        : 'the busiest first, over the last 5 minutes';
  }

  function status(s, error) {
    const p = document.getElementById('status');
    p.textContent = s;
    p.className = error ? 'error' : '';
  }

  async function poll() {
    try {
      const answer = await fetch('dashboard/data', { cache: 'no-store' });
      if (!answer.ok) {
        throw new Error('HTTP ' + answer.status);
      }
      const data = await answer.json();
      take(data);
      render();
      polls++;
      document.body.setAttribute('data-polls', String(polls));
      status('updated ' + new Date(data.time).toLocaleTimeString() + ' · configuration version ' + data.version
        + ' · every ' + POLL_MS / 1000 + ' s');
    } catch (e) {
      status('cannot reach the service (' + e.message + '); retrying', true);
    } finally {
      setTimeout(poll, POLL_MS);
    }
  }

  render();
  poll();
})();
