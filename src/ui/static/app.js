/**
 * The live calls page (docs/ui.md): wires the form, the connection (session.js: a read-only
 * monitor ticket in every mode), the model (calls.js), the table (table.js), its hangup and
 * transfer buttons (the HTTP control with the token, session.js callCommand; none when "Watch
 * only"), and the finished calls and chart (finished.js, chart.js) read every 10 s. The domain
 * and token typed in are kept in this module's memory only (never localStorage, sessionStorage
 * or cookies) for as long as the page is connected, to ask a fresh ticket when the connection
 * must be opened again, to send the buttons' commands and to read the finished calls;
 * "Disconnect" and closing the page forget them.
 */
import { applyMessage, createCalls, liveCount, rowsOf, whoOf } from './calls.js'
import { drawChart } from './chart.js'
import { drawFinished, finishedRows } from './finished.js'
import { CallsTable } from './table.js'
import { callCommand, getWithToken, monitorUri, requestTicket, socketUrl } from './session.js'

const $ = (id) => document.getElementById(id)
const prefix = document.querySelector('meta[name="cod-api-prefix"]')?.getAttribute('content') ?? '/api'

const form = $('connect-form')
const domainInput = $('domain')
const tokenInput = $('token')
const connectButton = $('connect-button')
const session = $('session')
const sessionDomain = $('session-domain')
const disconnectButton = $('disconnect')
const statusRegion = $('status')
const errorRegion = $('error')
const callsSection = $('calls')
const liveText = $('live-count')
const limitText = $('limit')
const meter = $('usage')
const empty = $('empty')
const table = new CallsTable($('rows'))
const watchOnlyInput = $('watch-only')
const transferForm = $('transfer-form')
const transferTitle = $('transfer-title')
const transferDestination = $('transfer-destination')
const historySection = $('history')
const chart = $('chart')
const chartCaption = $('chart-caption')
const finishedBody = $('finished-rows')
const finishedEmpty = $('finished-empty')

/** Close codes after which the page does not reconnect by itself (docs/cti.md "Connection limits and close codes"). */
const FINAL_CLOSES = new Map([
  [1008, 'Refused: this domain already has the most live calls pages (or other monitors) of this name open. Close one and connect again.'],
  [4001, 'A newer connection took this one\'s place. Connect again to take it back.'],
])
/** Ticket refusals that another try cannot fix (wrong token, unknown domain, blocked for failures). */
const FINAL_TICKET_STATUSES = new Set([400, 401, 403, 404, 429])
const RETRY_MIN_MS = 1000
const RETRY_MAX_MS = 30_000
/** How often the finished calls and the chart are read again: the daemon samples every 10 s. */
const RECENT_EVERY_MS = 10_000
/** After a call ends, its finished entry is read this soon (the daemon records it when the last leg is destroyed). */
const RECENT_AFTER_END_MS = 700
/** A command whose answer has not come by then is reported as unanswered (the daemon waits for FreeSWITCH). */
const COMMAND_WAIT_MS = 15_000

let credentials = null
let socket = null
/** Bumped on every (dis)connection, so that callbacks of an older socket do nothing. */
let generation = 0
/** Bumped when the operator's session ends (Disconnect, a final refusal), not on a reconnection: a command's answer outlives the latter. */
let sessionCount = 0
let retryMs = RETRY_MIN_MS
let retryTimer = null
let ticker = null
let calls = createCalls()
let recentTimer = null
let recentSoon = null
/** The leg the transfer form is open for. */
let transferUuid = null

const announce = (text) => {
  statusRegion.textContent = text
}
const showError = (text) => {
  errorRegion.textContent = text
}

function render() {
  const live = liveCount(calls)
  // Watching only, there is no Actions column at all (style.css), so the header and the cells stay aligned.
  callsSection.classList.toggle('watch-only', !calls.controls)
  table.render(rowsOf(calls, Date.now()))
  if (transferUuid !== null && !calls.channels.has(transferUuid)) closeTransfer()
  empty.hidden = calls.channels.size > 0
  liveText.textContent = String(live)
  if (calls.limit === null) {
    limitText.textContent = 'unknown'
    meter.hidden = true
  } else {
    limitText.textContent = String(calls.limit)
    meter.hidden = false
    meter.max = Math.max(1, calls.limit)
    meter.high = Math.max(1, calls.limit) * 0.8
    meter.value = Math.min(live, meter.max)
  }
  document.title = `(${live}) Live calls · ${calls.domain ?? ''}`
}

function showConnectedView(domain) {
  form.hidden = true
  session.hidden = false
  sessionDomain.textContent = domain
  callsSection.hidden = false
  historySection.hidden = false
}

function showForm() {
  form.hidden = false
  session.hidden = true
  callsSection.hidden = true
  historySection.hidden = true
  connectButton.disabled = false
  document.title = 'Live calls'
}

function stop() {
  generation += 1
  sessionCount += 1
  clearTimeout(retryTimer)
  clearInterval(ticker)
  clearInterval(recentTimer)
  clearTimeout(recentSoon)
  retryTimer = null
  ticker = null
  recentTimer = null
  recentSoon = null
  if (socket !== null) socket.close(1000, 'closed by the operator')
  socket = null
  credentials = null
  calls = createCalls()
  table.render([])
  closeTransfer()
  drawFinished(finishedBody, [])
  chart.replaceChildren()
}

/** Reads the finished calls and the channel samples again, with the token in memory. */
async function refreshRecent() {
  if (credentials === null) return
  const gen = generation
  const { domain, token } = credentials
  const [finished, samples] = await Promise.all([
    getWithToken(prefix, '/finished_calls', domain, token),
    getWithToken(prefix, '/channel_samples', domain, token),
  ])
  if (gen !== generation) return
  const now = Date.now()
  if (finished.ok) {
    const rows = finishedRows(finished.body.calls, now)
    drawFinished(finishedBody, rows)
    finishedEmpty.hidden = rows.length > 0
  }
  if (samples.ok) {
    const g = drawChart(chart, samples.body.samples, now)
    chartCaption.textContent =
      g.last === undefined
        ? 'No samples yet: the daemon samples the live channels every 10 s.'
        : `Live channels (line) against the channel limit (dashed), one sample every ${samples.body.interval_ms / 1000} s; now ${g.last.live} of ${g.last.limit}.`
  }
}

/** The finished calls again soon (a call just ended), once however many legs end together. */
function refreshRecentSoon() {
  if (recentSoon !== null) return
  recentSoon = setTimeout(() => {
    recentSoon = null
    void refreshRecent()
  }, RECENT_AFTER_END_MS)
}

/**
 * Sends a button's command through the HTTP control with the token in memory (not on the
 * WebSocket: its monitor ticket commands nothing) and says how it went: announced when
 * FreeSWITCH accepted it, else the daemon's refusal as it answered (channel_not_found,
 * destination_not_found, command_failed...). Resolves whether it was done.
 */
async function runCommand(what, uuid, name, body) {
  if (credentials === null) return false
  const ofSession = sessionCount
  const { domain, token } = credentials
  showError('')
  const r = await callCommand(prefix, domain, token, uuid, name, body, COMMAND_WAIT_MS)
  // Disconnected meanwhile: the page has moved on, and what it would say no longer applies.
  if (ofSession !== sessionCount) return false
  if (r.ok) {
    announce(`${what}: done.`)
    return true
  }
  const sentence = /[.!?]$/.test(r.description) ? r.description : `${r.description}.`
  showError(r.status === 0 ? `${what} failed: ${sentence}` : `${what} refused (${r.status} ${r.id}): ${sentence}`)
  return false
}

function openTransfer(uuid) {
  const ch = calls.channels.get(uuid)
  if (ch === undefined) return
  transferUuid = uuid
  transferTitle.textContent = `Transfer ${whoOf(ch)}`
  transferForm.hidden = false
  transferDestination.value = ''
  transferDestination.focus()
}

function closeTransfer() {
  transferUuid = null
  transferForm.hidden = true
}

function retryLater(why) {
  const gen = generation
  const waitS = Math.round(retryMs / 1000)
  announce(`${why} Connecting again in ${waitS} s.`)
  retryTimer = setTimeout(() => {
    if (gen === generation) void open()
  }, retryMs)
  retryMs = Math.min(retryMs * 2, RETRY_MAX_MS)
}

/** Gets a ticket and opens the monitor connection with the credentials in memory. */
async function open() {
  if (credentials === null) return
  const gen = ++generation
  const { domain, token } = credentials
  const uri = monitorUri(prefix)
  announce(`Connecting to ${domain}…`)
  const ticket = await requestTicket(prefix, domain, token, uri)
  if (gen !== generation) return
  if (!ticket.ok) {
    if (FINAL_TICKET_STATUSES.has(ticket.status)) {
      const wasConnected = socket !== null || calls.domain !== null
      stop()
      showForm()
      announce('Not connected.')
      const sentence = /[.!?]$/.test(ticket.description) ? ticket.description : `${ticket.description}.`
      showError(`Refused (${ticket.status} ${ticket.id}): ${sentence}${wasConnected ? '' : ' Check the domain and the token.'}`)
      domainInput.focus()
      return
    }
    return retryLater(`The daemon did not give a ticket (${ticket.status === 0 ? 'unreachable' : `${ticket.status} ${ticket.id}`}).`)
  }
  const ws = new WebSocket(socketUrl(location, uri, ticket.ticket))
  socket = ws
  let opened = false
  ws.addEventListener('open', () => {
    if (gen !== generation) return
    opened = true
    retryMs = RETRY_MIN_MS
  })
  ws.addEventListener('message', (e) => {
    if (gen !== generation || typeof e.data !== 'string') return
    let msg
    try {
      msg = JSON.parse(e.data)
    } catch {
      return
    }
    const change = applyMessage(calls, msg)
    switch (change.kind) {
      case 'snapshot':
        showError('')
        callsSection.classList.remove('stale')
        callsSection.removeAttribute('aria-busy')
        showConnectedView(calls.domain ?? domain)
        announce(`Connected to ${calls.domain ?? domain}: ${liveCount(calls)} live channel${liveCount(calls) === 1 ? '' : 's'}.`)
        clearInterval(ticker)
        ticker = setInterval(render, 1000)
        clearInterval(recentTimer)
        recentTimer = setInterval(() => void refreshRecent(), RECENT_EVERY_MS)
        void refreshRecent()
        break
      case 'added':
        announce(`New call: ${whoOf(change.channel)}, ${change.channel.state}.`)
        break
      case 'removed':
        announce(`Call ended: ${whoOf(change.channel)}.`)
        refreshRecentSoon()
        break
      case 'system':
        showError(change.description)
        break
      default:
        break
    }
    render()
  })
  ws.addEventListener('close', (e) => {
    if (gen !== generation) return
    socket = null
    clearInterval(ticker)
    ticker = null
    const final = FINAL_CLOSES.get(e.code)
    if (final !== undefined) {
      stop()
      showForm()
      announce('Not connected.')
      showError(final)
      return
    }
    // What is shown may be out of date until the new snapshot: greyed out, and said so.
    callsSection.classList.add('stale')
    callsSection.setAttribute('aria-busy', 'true')
    retryLater(opened ? 'The connection was lost; the calls shown may be out of date.' : 'The connection was refused.')
  })
}

form.addEventListener('submit', (e) => {
  e.preventDefault()
  const domain = domainInput.value.trim()
  const token = tokenInput.value
  if (domain === '' || token === '') {
    showError('Enter the domain and its API token.')
    return
  }
  stop()
  showError('')
  credentials = { domain, token }
  calls = createCalls(!watchOnlyInput.checked)
  // The token leaves the field: from here on it is only in this module's memory.
  tokenInput.value = ''
  connectButton.disabled = true
  retryMs = RETRY_MIN_MS
  void open().finally(() => {
    connectButton.disabled = false
  })
})

$('rows').addEventListener('click', (e) => {
  const button = typeof e.target?.closest === 'function' ? e.target.closest('button[data-action]') : null
  const uuid = button?.closest('tr')?.dataset.uuid
  // Watching only there are no buttons to click; a stray event from one commands nothing either.
  if (button === null || uuid === undefined || !calls.controls) return
  const ch = calls.channels.get(uuid)
  if (ch === undefined) return
  if (button.dataset.action === 'hangup') void runCommand(`Hang up ${whoOf(ch)}`, uuid, 'hangup', {})
  else openTransfer(uuid)
})

transferForm.addEventListener('submit', (e) => {
  e.preventDefault()
  const uuid = transferUuid
  const destination = transferDestination.value.trim()
  if (uuid === null) return
  if (destination === '') {
    showError('Enter where to transfer the call.')
    return
  }
  const ch = calls.channels.get(uuid)
  void runCommand(`Transfer ${ch === undefined ? uuid : whoOf(ch)} to ${destination}`, uuid, 'transfer', { destination }).then((done) => {
    if (done) closeTransfer()
  })
})

$('transfer-cancel').addEventListener('click', closeTransfer)

disconnectButton.addEventListener('click', () => {
  stop()
  showForm()
  showError('')
  announce('Disconnected; the token was forgotten.')
  domainInput.focus()
})

showForm()
