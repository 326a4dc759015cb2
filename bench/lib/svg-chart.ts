/**
 * Small line charts as one SVG file, written by hand (a few dozen lines; no chart library to
 * install and pin): a grid of panels sharing the x axis (minutes), each with one or two series.
 * The soak benchmark draws its samples with it (bench/results/soak.svg, shown in docs/bench.md).
 */

export interface Series {
  readonly name: string
  readonly points: ReadonlyArray<readonly [number, number]>
}

export interface Panel {
  readonly title: string
  readonly unit: string
  readonly series: readonly Series[]
}

const W = 420
const H = 190
const PAD = { left: 56, right: 12, top: 28, bottom: 30 }
const COLOURS = ['#1f77b4', '#d62728']

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/** A readable number for an axis label. */
function label(v: number): string {
  const a = Math.abs(v)
  if (a >= 100) return v.toFixed(0)
  if (a >= 10) return v.toFixed(1)
  return v.toFixed(2)
}

function panel(p: Panel, x0: number, y0: number): string {
  const pts = p.series.flatMap((s) => s.points)
  const xs = pts.map(([x]) => x)
  const ys = pts.map(([, y]) => y).filter((y) => Number.isFinite(y))
  const xMax = Math.max(1, ...xs)
  const yMin = Math.min(0, ...ys)
  const yMax = ys.length === 0 ? 1 : Math.max(...ys) === yMin ? yMin + 1 : Math.max(...ys) * 1.05
  const iw = W - PAD.left - PAD.right
  const ih = H - PAD.top - PAD.bottom
  const sx = (x: number) => x0 + PAD.left + (x / xMax) * iw
  const sy = (y: number) => y0 + PAD.top + ih - ((y - yMin) / (yMax - yMin)) * ih
  const out: string[] = []
  out.push(`<text x="${x0 + PAD.left}" y="${y0 + 16}" font-size="13" font-weight="bold">${esc(p.title)} (${esc(p.unit)})</text>`)
  out.push(`<rect x="${x0 + PAD.left}" y="${y0 + PAD.top}" width="${iw}" height="${ih}" fill="none" stroke="#999"/>`)
  for (let k = 0; k <= 4; k++) {
    const y = yMin + ((yMax - yMin) * k) / 4
    out.push(`<line x1="${x0 + PAD.left}" x2="${x0 + PAD.left + iw}" y1="${sy(y)}" y2="${sy(y)}" stroke="#eee"/>`)
    out.push(`<text x="${x0 + PAD.left - 4}" y="${sy(y) + 4}" font-size="10" text-anchor="end">${label(y)}</text>`)
    const x = (xMax * k) / 4
    out.push(`<text x="${sx(x)}" y="${y0 + H - 14}" font-size="10" text-anchor="middle">${label(x)}</text>`)
  }
  out.push(`<text x="${x0 + PAD.left + iw}" y="${y0 + H - 2}" font-size="10" text-anchor="end">minutes</text>`)
  p.series.forEach((s, i) => {
    const colour = COLOURS[i % COLOURS.length] ?? '#000'
    const d = s.points.filter(([, y]) => Number.isFinite(y)).map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ')
    out.push(`<polyline fill="none" stroke="${colour}" stroke-width="1.5" points="${d}"/>`)
    if (p.series.length > 1) out.push(`<text x="${x0 + W - PAD.right - 4}" y="${y0 + 16 + 12 * i}" font-size="11" text-anchor="end" fill="${colour}">${esc(s.name)}</text>`)
  })
  return out.join('\n')
}

/** The panels in a grid of `columns`, under a title. */
export function svgCharts(title: string, panels: readonly Panel[], columns = 2): string {
  const rows = Math.ceil(panels.length / columns)
  const width = W * columns
  const height = H * rows + 30
  const body = panels.map((p, i) => panel(p, (i % columns) * W, 30 + Math.floor(i / columns) * H)).join('\n')
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif">
<rect width="100%" height="100%" fill="white"/>
<text x="10" y="20" font-size="14">${esc(title)}</text>
${body}
</svg>
`
}
