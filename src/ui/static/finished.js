/**
 * The finished calls table (docs/ui.md "Finished calls"): the rows of `GET {prefix}/finished_calls`
 * (docs/api.md), newest first, drawn in full at each read (50 rows at most). The text of each
 * cell is made by finishedRows, without the DOM, so that test/ui/recent.test.ts checks it
 * without a browser; every value goes in with textContent.
 */

const NONE = '—'

/**
 * Seconds as m:ss or h:mm:ss.
 * @internal Exported for tests: test/ui/recent.test.ts.
 */
export function secondsText(s) {
  const n = Math.max(0, Math.floor(Number(s) || 0))
  const hh = Math.floor(n / 3600)
  const mm = Math.floor((n % 3600) / 60)
  const ss = String(n % 60).padStart(2, '0')
  return hh > 0 ? `${hh}:${String(mm).padStart(2, '0')}:${ss}` : `${mm}:${ss}`
}

const OUTCOMES = {
  connected: 'connected',
  answered: 'answered',
  busy: 'busy',
  no_answer: 'no answer',
  cancelled: 'cancelled',
  failed: 'failed',
}

/** Epoch ms as the browser's local time of day (HH:MM:SS), with the date when it is not today. */
function whenText(ms, nowMs) {
  const d = new Date(ms)
  const time = d.toLocaleTimeString('en-GB', { hour12: false })
  return new Date(nowMs).toDateString() === d.toDateString() ? time : `${d.toISOString().slice(0, 10)} ${time}`
}

/** The cells of each finished call (the API's objects, newest first). */
export function finishedRows(calls, nowMs) {
  if (!Array.isArray(calls)) return []
  return calls
    .filter((c) => c !== null && typeof c === 'object' && typeof c.id === 'string')
    .map((c) => ({
      id: c.id,
      ended: typeof c.ended_at === 'number' ? whenText(c.ended_at, nowMs) : NONE,
      parties: Array.isArray(c.parties) && c.parties.length > 0 ? c.parties.map(String).join(' → ') : NONE,
      outcome: OUTCOMES[c.outcome] ?? String(c.outcome ?? NONE),
      outcomeKey: typeof c.outcome === 'string' ? c.outcome : 'failed',
      duration: secondsText(c.duration_s),
      talk: secondsText(c.talk_s),
      cause: typeof c.hangup_cause === 'string' ? c.hangup_cause : NONE,
    }))
}

const COLUMNS = ['ended', 'parties', 'outcome', 'duration', 'talk', 'cause']

/** Replaces the rows of `tbody` with these. */
export function drawFinished(tbody, rows) {
  const trs = rows.map((row) => {
    const tr = document.createElement('tr')
    tr.dataset.id = row.id
    for (const column of COLUMNS) {
      const cell = document.createElement(column === 'parties' ? 'th' : 'td')
      if (column === 'parties') cell.scope = 'row'
      cell.dataset.column = column
      if (column === 'outcome') {
        const badge = document.createElement('span')
        badge.className = 'outcome'
        badge.dataset.outcome = row.outcomeKey
        badge.textContent = row.outcome
        cell.append(badge)
      } else cell.textContent = row[column]
      tr.append(cell)
    }
    return tr
  })
  tbody.replaceChildren(...trs)
}
