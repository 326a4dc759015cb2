/**
 * The chart of the domain's live channels against its channel_limit over the last hour
 * (docs/ui.md "Channels over the last hour"), drawn as inline SVG from the samples of
 * `GET {prefix}/channel_samples` (one every 10 s, kept by the daemon). No chart library: two
 * polylines, a few grid lines and labels. The geometry (chartGeometry) has no DOM, so
 * test/ui/recent.test.ts checks it without a browser; drawChart makes the elements with
 * createElementNS and textContent (the page's Trusted Types allow no markup from strings), and
 * styles them by class (style.css: the CSP allows no inline style).
 */

const SVG = 'http://www.w3.org/2000/svg'
const WIDTH = 720
const HEIGHT = 200
/** Room for the labels: left (counts), bottom (times). */
const PAD = { left: 36, right: 8, top: 10, bottom: 22 }
const HOUR_MS = 3_600_000
/** The shortest time the x axis spans (a daemon started a moment ago has a few samples only). */
const MIN_SPAN_MS = 60_000

/** A round step for the y axis: 1, 2, 5, 10, 20, 50... giving at most 5 lines. */
function yStep(max) {
  for (let magnitude = 1; ; magnitude *= 10) for (const s of [1, 2, 5]) if ((s * magnitude) * 5 >= max) return s * magnitude
}

/** `−N min` or `−N s` before now. */
function agoText(ms) {
  if (ms <= 0) return 'now'
  return ms >= 120_000 ? `−${Math.round(ms / 60_000)} min` : `−${Math.round(ms / 1000)} s`
}

/**
 * @internal Exported for tests: test/ui/recent.test.ts checks the geometry without a browser.
 * Points of the live count and of the limit over the hour ending at `nowMs` (or since the first
 * sample, when the daemon has been up for less: at least a minute), the y scale's top (a little
 * above the larger of both) and the grid lines.
 */
export function chartGeometry(samples, nowMs) {
  const list = Array.isArray(samples) ? samples.filter((s) => typeof s?.at === 'number' && s.at > nowMs - HOUR_MS && s.at <= nowMs) : []
  const span = Math.min(HOUR_MS, Math.max(MIN_SPAN_MS, nowMs - (list[0]?.at ?? nowMs)))
  const top = Math.max(1, ...list.map((s) => Math.max(s.live, s.limit)))
  const step = yStep(top)
  const yMax = Math.ceil((top * 1.1) / step) * step
  const innerW = WIDTH - PAD.left - PAD.right
  const innerH = HEIGHT - PAD.top - PAD.bottom
  const x = (at) => PAD.left + ((at - (nowMs - span)) / span) * innerW
  const y = (v) => PAD.top + innerH - (v / yMax) * innerH
  const round = (n) => Math.round(n * 10) / 10
  const points = (key) => list.map((s) => `${round(x(s.at))},${round(y(s[key]))}`).join(' ')
  const yLines = []
  for (let v = 0; v <= yMax; v += step) yLines.push({ value: v, y: round(y(v)) })
  const xLines = [4, 3, 2, 1, 0].map((quarter) => ({ label: agoText((span * quarter) / 4), x: round(x(nowMs - (span * quarter) / 4)) }))
  const last = list.at(-1)
  return { live: points('live'), limit: points('limit'), yMax, yLines, xLines, spanMs: span, count: list.length, last }
}

function el(name, attrs, text) {
  const e = document.createElementNS(SVG, name)
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v))
  if (text !== undefined) e.textContent = text
  return e
}

/** Replaces the chart in `container`; returns the geometry (for the caption). */
export function drawChart(container, samples, nowMs) {
  const g = chartGeometry(samples, nowMs)
  const svg = el('svg', { viewBox: `0 0 ${WIDTH} ${HEIGHT}`, class: 'chart-svg', role: 'img', 'aria-labelledby': 'chart-title chart-caption' })
  for (const line of g.yLines) {
    svg.append(el('line', { x1: PAD.left, x2: WIDTH - PAD.right, y1: line.y, y2: line.y, class: 'grid' }))
    svg.append(el('text', { x: PAD.left - 6, y: line.y + 4, class: 'axis y' }, String(line.value)))
  }
  // The labels at both ends are anchored inside the chart, so that none is cut off.
  g.xLines.forEach((line, i) => {
    const anchor = i === 0 ? ' start' : i === g.xLines.length - 1 ? ' end' : ''
    svg.append(el('text', { x: line.x, y: HEIGHT - 6, class: `axis x${anchor}` }, line.label))
  })
  if (g.count > 0) {
    svg.append(el('polyline', { points: g.limit, class: 'limit', 'data-series': 'limit' }))
    svg.append(el('polyline', { points: g.live, class: 'live', 'data-series': 'live' }))
    // The newest sample as a dot: a single sample (just after the start) draws no line.
    const [cx, cy] = g.live.split(' ').at(-1).split(',')
    svg.append(el('circle', { cx, cy, r: 3, class: 'live-dot' }))
  }
  container.replaceChildren(svg)
  return g
}
