/**
 * The live calls page (docs/ui.md) in a real headless Chromium (the Debian package `chromium`,
 * driven by playwright-core; .ci/run installs it), against the whole daemon on its built-in
 * simulator with the shipped configuration: a wrong token shows the daemon's refusal; the right
 * one connects with a read-only monitor ticket (in every mode: issue 8's rule); a call appears
 * within 2 s of the API's reply, shows `answered`, and its "Hang up" button (the HTTP control,
 * `POST /api/calls/{uuid}/hangup` with the token) ends it on the simulator, after which it is in
 * the finished calls table; a "Transfer" shows the daemon's refusal of a destination that names
 * nothing, then sends a bridged leg to bob, whose phone rings; the chart draws the live channels
 * against the limit; "Watch only" shows no button, and a command sent on the page's own
 * WebSocket is refused (`permission_denied`); values typed by callers are shown as text; after
 * a daemon restart the page reconnects by itself (the token in its memory); the page runs under
 * its Content-Security-Policy without a single violation.
 *
 * One browser launch for the whole file. Screenshots are saved to test/ui/artifacts/
 * (git-ignored) for a person to look at: live-calls.png (a call up, the chart and the finished
 * calls; docs/images/live-calls.png is a copy), watch-only.png, wrong-token.png.
 *
 * Skipped, with the reason printed, only when chromium is not installed (COD_CHROMIUM names
 * another executable).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import t from 'tap'
import type { WebSocketRoute } from 'playwright-core'
import { startHarness, type Harness } from '../e2e/harness.js'
import { startDaemon } from '../../src/daemon.js'
import { silentLogger } from '../../src/util/logger.js'
import { CONTENT_SECURITY_POLICY } from '../../src/ui/headers.js'

const CHROMIUM = process.env.COD_CHROMIUM ?? '/usr/bin/chromium'
const ARTIFACTS = new URL('./artifacts/', import.meta.url)
/** The flags the issue asks for; playwright-core adds --headless and --user-data-dir (a fresh folder) itself. */
const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]
/** Generous waits for things that happen in milliseconds, for a loaded 2-core machine. */
const SLOW = 15_000
/** The one ticket URI the page may ask for, "Watch only" or not (docs/cti.md "Monitor tickets"). */
const MONITOR_URI = '/api/ws_cti?app_name=live-calls&full_events=true&read_only=true'

/** An API request the page sent, as Chromium sent it. */
interface PageRequest {
  readonly method: string
  readonly path: string
  readonly body: string | null
  readonly basicAuth: boolean
}

if (!existsSync(CHROMIUM)) {
  const reason = `chromium is not installed at ${CHROMIUM} (apt-get install chromium; .ci/run installs it)`
  console.log(`# skipping the live calls page test: ${reason}`)
  t.test('the live calls page in Chromium', { skip: reason }, async () => {})
} else {
  t.test('the live calls page in Chromium', async (t) => {
    const { chromium } = await import('playwright-core')
    // Samples every 500 ms instead of 10 s: the chart has a line within the test's seconds.
    const h: Harness = await startHarness({ timeScale: 1, channelSampleIntervalMs: 500 })
    t.teardown(() => h.close())
    const userDataDir = mkdtempSync(join(tmpdir(), 'cod-ui-chromium-'))
    t.teardown(() => rmSync(userDataDir, { recursive: true, force: true }))
    const context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1100, height: 760 },
      timeout: 60_000,
    })
    // Registered after the folder's removal, so it runs before it (teardowns run last first).
    t.teardown(() => context.close())
    const page = context.pages()[0] ?? (await context.newPage())
    page.setDefaultTimeout(SLOW)
    const problems: string[] = []
    page.on('console', (m) => {
      // With the address: Chromium's "Failed to load resource" does not say which.
      if (m.type() === 'error' || /Content Security Policy|Trusted Type/i.test(m.text())) problems.push(`console ${m.type()}: ${m.text()} at ${m.location().url}`)
    })
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`))
    const sent: PageRequest[] = []
    page.on('request', (r) => {
      const url = new URL(r.url())
      if (!url.pathname.startsWith('/api/')) return
      sent.push({ method: r.method(), path: url.pathname, body: r.postData(), basicAuth: /^Basic /.test(r.headers()['authorization'] ?? '') })
    })
    const commandsSent = () => sent.filter((r) => r.path.startsWith('/api/calls/'))

    const base = h.daemon.baseUrl
    const response = await page.goto(`${base}/ui/`)
    t.equal(response?.status(), 200, 'the page is served')
    t.equal(response?.headers()['content-security-policy'], CONTENT_SECURITY_POLICY, 'with its Content-Security-Policy')
    t.match(response?.headers()['content-security-policy'] ?? '', /script-src 'self'; style-src 'self'/, 'no inline script or style allowed')
    t.equal(await page.title(), 'Live calls')

    const connect = async (domain: string, token: string, watchOnly = false): Promise<void> => {
      await page.getByLabel('Domain').fill(domain)
      await page.getByLabel('API token').fill(token)
      await page.getByLabel('Watch only').setChecked(watchOnly)
      await page.getByRole('button', { name: 'Connect' }).click()
    }

    t.test('a wrong token shows the daemon\'s refusal', async (t) => {
      await connect('example.test', 'wrong-token-wrong-token')
      const error = page.locator('#error')
      await error.getByText('Refused (401 unauthorized)').waitFor()
      t.match(await error.textContent(), /[.!?] Check the domain and the token\.$/, "the daemon's reason, then what to do")
      t.equal(await error.getAttribute('role'), 'alert', 'announced to screen readers')
      t.equal(await page.getByLabel('API token').inputValue(), '', 'the token field was emptied')
      t.ok(await page.locator('#connect-form').isVisible(), 'the form stays to try again')
      t.notOk(await page.locator('#calls').isVisible(), 'no table')
      mkdirSync(ARTIFACTS, { recursive: true })
      await page.screenshot({ path: new URL('wrong-token.png', ARTIFACTS).pathname })
    })

    t.test('the right token connects; nothing is stored by the browser', async (t) => {
      await connect('example.test', 'demo-token-example-test')
      await page.locator('#status').getByText('Connected to example.test: 0 live channels.').waitFor()
      t.equal(await page.locator('#error').textContent(), '', 'the earlier error is gone')
      t.equal(await page.locator('#limit').textContent(), '20', 'the domain\'s channel_limit, from initial_info')
      t.equal(await page.locator('#live-count').textContent(), '0')
      t.ok(await page.locator('#empty').isVisible(), '"No live calls."')
      // A string (this file is type-checked without the DOM's types); evaluate is not subject to the page's CSP.
      const stored = await page.evaluate('({ local: localStorage.length, session: sessionStorage.length, cookie: document.cookie })')
      t.same(stored, { local: 0, session: 0, cookie: '' }, 'no storage and no cookie')
      t.same(await context.cookies(), [], 'the browser holds no cookie')
      const tickets = sent.filter((r) => r.path === '/api/gen_ws_ticket')
      t.same(tickets.at(-1), { method: 'POST', path: '/api/gen_ws_ticket', body: JSON.stringify({ uri: MONITOR_URI }), basicAuth: true }, 'a read-only monitor ticket, with buttons to show')
    })

    t.test('a call appears within 2 s, shows answered, and disappears after its hangup', async (t) => {
      // alice's first terminal answers after 1 s; the PSTN destination 0322223333 never answers
      // (conf/domains/example.test.yaml), so alice's leg stays `answered` while it rings.
      const endUser = { name: '<img src=x onerror="document.title=1"> Jane', organization: 'ACME & <b>Co</b>' }
      const reply = await h.post('call_user', { user_name: 'alice', destination: { called_number: '0322223333', end_user: endUser } })
      const repliedAt = Date.now()
      t.equal(reply.status, 200, JSON.stringify(reply.body))
      const uuids = reply.body.uuids as string[]
      await page.locator(uuids.map((u) => `#rows tr[data-uuid="${u}"]`).join(', ')).first().waitFor({ timeout: 2000 })
      t.ok(Date.now() - repliedAt < 2000, `a row of the call within 2 s of the reply (${Date.now() - repliedAt} ms)`)

      const answered = page.locator('#rows tr', { has: page.locator('.state[data-state="answered"]') })
      await answered.first().waitFor()
      const aliceLeg = await answered.first().getAttribute('data-uuid')
      t.ok(aliceLeg !== null && uuids.includes(aliceLeg), 'the answered row is alice\'s originated leg')
      const row = page.locator(`#rows tr[data-uuid="${aliceLeg}"]`)
      t.equal(await row.locator('th .who').textContent(), 'alice', 'user or number')
      t.equal(await row.locator('th .user').textContent(), 'user 1')
      t.equal(await row.locator('td[data-column="direction"]').textContent(), 'outbound')
      t.equal(await row.locator('.state').textContent(), 'answered')
      t.match(await row.locator('td[data-column="duration"]').textContent(), /^0:0\d$/, 'duration since the answer')

      // The PSTN leg rings; it carries the end_user, shown as the text it is.
      const pstn = page.locator('#rows tr', { has: page.locator('th .who', { hasText: '0322223333' }) })
      await pstn.locator('.state[data-state="ringing"]').waitFor()
      t.equal(await pstn.locator('td[data-column="endUser"]').textContent(), `${endUser.name} (${endUser.organization})`, 'end_user as text')
      t.equal(await page.locator('#rows img, #rows b').count(), 0, 'no markup from a value reached the DOM')
      t.equal(await pstn.locator('td[data-column="peer"]').textContent(), 'alice', 'the PSTN leg\'s peer is alice')
      t.equal(await row.locator('td[data-column="peer"]').textContent(), '0322223333', 'and alice\'s peer is the number')
      // alice's second terminal lost the race: only her answered leg and the PSTN leg are left.
      // (Locators, not waitForFunction: the page's CSP forbids the eval that would need.)
      await page.locator('#rows tr').nth(2).waitFor({ state: 'detached' })
      t.equal(await page.locator('#rows tr').count(), 2)
      t.equal(await page.locator('#live-count').textContent(), '2', 'two live channels')
      t.equal(await page.locator('#limit').textContent(), '20')
      t.equal(await page.title(), '(2) Live calls · example.test')
      t.match(await page.locator('#status').textContent(), /^(New call|Call ended): /, 'changes are announced')

      // The durations tick by themselves, every second.
      await row.locator('td[data-column="duration"]').filter({ hasNotText: '0:00' }).waitFor()
      t.pass('the duration counts on')
      // Hang up alice's leg with its button: the HTTP control, with the token the page holds.
      const answer = page.waitForResponse((r) => r.url().endsWith(`/api/calls/${aliceLeg}/hangup`))
      await row.getByRole('button', { name: 'Hang up alice' }).click()
      const replied = await answer
      t.same([replied.status(), await replied.json()], [200, { result_code: 0 }], 'the daemon accepted it')
      await page.locator('#rows tr').first().waitFor({ state: 'detached' })
      t.pass('every row of the call is gone after the hangup')
      t.same(commandsSent(), [{ method: 'POST', path: `/api/calls/${aliceLeg}/hangup`, body: '{}', basicAuth: true }], 'one POST of the hangup route, with the token')
      t.ok(await page.locator('#empty').isVisible(), '"No live calls." again')
      t.equal(await page.locator('#live-count').textContent(), '0')
      t.equal(await page.locator('#error').textContent(), '', 'no error')

      // The call is now the newest finished call: its parties, outcome, duration and cause. Its id
      // is its first offered leg: one of alice's two (both offered by one originate, in the same
      // millisecond at times), not necessarily the one that answered.
      const finished = page.locator(uuids.map((u) => `#finished-rows tr[data-id="${u}"]`).join(', ')).first()
      await finished.waitFor()
      t.equal(await finished.locator('[data-column="parties"]').textContent(), 'alice → 0322223333', 'alice, then the number she was connected to')
      t.equal(await finished.locator('[data-column="outcome"]').textContent(), 'answered', 'alice answered; the number never did')
      t.equal(await finished.locator('[data-column="cause"]').textContent(), 'NORMAL_CLEARING', 'the hangup by button')
      t.match(await finished.locator('[data-column="duration"]').textContent(), /^0:0[1-9]$/, 'offer to hangup')
      t.match(await finished.locator('[data-column="ended"]').textContent(), /^\d\d:\d\d:\d\d$/, 'when, in local time')
      t.notOk(await page.locator('#finished-empty').isVisible())
    })

    t.test('a transfer by button sends a bridged leg to bob, whose phone rings', async (t) => {
      // alice answers after 1 s, the PSTN number (default behaviour) after 1 s: the two are bridged.
      const reply = await h.post('call_user', { user_name: 'alice', destination: '0344445555' })
      t.equal(reply.status, 200, JSON.stringify(reply.body))
      const pstn = page.locator('#rows tr', { has: page.locator('th .who', { hasText: '0344445555' }) })
      await pstn.locator('.state[data-state="bridged"]').waitFor()
      const pstnLeg = await pstn.getAttribute('data-uuid')
      await pstn.getByRole('button', { name: 'Transfer 0344445555' }).click()
      t.ok(await page.locator('#transfer-form').isVisible(), 'the transfer form opens')
      t.equal(await page.locator('#transfer-title').textContent(), 'Transfer 0344445555')
      // A destination that names nothing: the daemon's refusal is shown, the form stays for another try.
      await page.getByLabel('Transfer to').fill('nobody-here')
      await page.locator('#transfer-submit').click()
      await page.locator('#error').getByText('Transfer 0344445555 to nobody-here refused (404 destination_not_found): ').waitFor()
      t.match(await page.locator('#error').textContent(), /names no user, group, extension or PSTN number of this domain\.$/, "the daemon's reason")
      t.ok(await page.locator('#transfer-form').isVisible(), 'the form stays open')
      t.ok(await pstn.locator('.state[data-state="bridged"]').isVisible(), 'the call is untouched')
      await page.getByLabel('Transfer to').fill('bob')
      await page.locator('#transfer-submit').click()
      await page.locator('#transfer-form').waitFor({ state: 'hidden' })
      t.pass('the form closes once the daemon said done')
      t.equal(await page.locator('#error').textContent(), '', 'the earlier refusal is gone')
      t.same(
        commandsSent().slice(-2).map((r) => [r.method, r.path, r.body, r.basicAuth]),
        [
          ['POST', `/api/calls/${pstnLeg}/transfer`, '{"destination":"nobody-here"}', true],
          ['POST', `/api/calls/${pstnLeg}/transfer`, '{"destination":"bob"}', true],
        ],
        'the transfer route, with the token',
      )
      // The dialplan rings bob's terminal for the transferred caller.
      const bob = page.locator('#rows tr', { has: page.locator('th .who', { hasText: /^bob$/ }) })
      await bob.first().waitFor()
      t.pass("bob's leg appears")
      await page.locator('#chart svg polyline[data-series="live"]').waitFor()
      await page.locator('#chart-caption').getByText(/now \d+ of 20\./).waitFor()
      t.ok(await page.locator('#chart svg polyline[data-series="limit"]').count(), 'the limit is drawn too')
      t.equal(await page.locator('#chart svg line.grid').count() > 1, true, 'with grid lines')
      mkdirSync(ARTIFACTS, { recursive: true })
      const shot = new URL('live-calls.png', ARTIFACTS)
      await page.screenshot({ path: shot.pathname, fullPage: true })
      t.ok(existsSync(shot), `screenshot saved: ${shot.pathname}`)
      // Every leg hung up by its button, one at a time: a leg FreeSWITCH ends with its peer goes by itself.
      const hangups = page.locator('#rows tr button[data-action="hangup"]:visible')
      while ((await hangups.count()) > 0) {
        const leg = await hangups.first().locator('xpath=ancestor::tr').getAttribute('data-uuid')
        const answer = page.waitForResponse((r) => r.url().endsWith(`/api/calls/${leg}/hangup`))
        await hangups.first().click()
        t.equal((await answer).status(), 200, `hung up ${leg}`)
        await page.locator(`#rows tr[data-uuid="${leg}"]`).waitFor({ state: 'detached' })
        await page.waitForTimeout(500)
      }
      await page.locator('#empty').waitFor()
      t.pass('every leg ended by the buttons')
    })

    t.test('watch only: no buttons, and a command on the page\'s own connection is refused', async (t) => {
      // The page's own WebSocket, reached through Chromium: this test sends on it what a script on
      // the page could, and reads the daemon's answers (every message is still passed on both ways).
      let pageSocket: { toDaemon: WebSocketRoute; url: string } | undefined
      const results = new Map<number, (m: Record<string, unknown>) => void>()
      // Only this test's sockets: the later ones (the reconnection) are the browser's own again.
      let routing = true
      t.teardown(() => {
        routing = false
      })
      await page.routeWebSocket(
        (url) => routing && url.pathname === '/api/ws_cti',
        (ws) => {
          const toDaemon = ws.connectToServer()
          pageSocket = { toDaemon, url: ws.url() }
          toDaemon.onMessage((m) => {
            ws.send(m)
            const msg = JSON.parse(m.toString()) as Record<string, unknown>
            if (msg.type === 'result' && typeof msg.id === 'number') results.get(msg.id)?.(msg)
          })
        },
      )
      const onPageSocket = (id: number, body: Record<string, unknown>) =>
        new Promise<Record<string, unknown>>((resolve) => {
          results.set(id, resolve)
          pageSocket?.toDaemon.send(JSON.stringify({ id, ...body }))
        })

      await page.getByRole('button', { name: 'Disconnect' }).click()
      await connect('example.test', 'demo-token-example-test', true)
      await page.locator('#status').getByText(/^Connected to example.test/).waitFor()
      t.equal(pageSocket?.url.split('&ticket=')[0], `${base.replace('http', 'ws')}${MONITOR_URI}`, 'the page opened its monitor ticket')
      const reply = await h.post('call_user', { user_name: 'alice', destination: '0322223333' })
      t.equal(reply.status, 200)
      const answered = page.locator('#rows tr', { has: page.locator('.state[data-state="answered"]') })
      await answered.first().waitFor()
      t.equal(await page.locator('#rows button:visible').count(), 0, 'no hangup or transfer button')
      t.ok(await page.locator('#actions-header').isHidden(), 'no Actions column')
      mkdirSync(ARTIFACTS, { recursive: true })
      await page.screenshot({ path: new URL('watch-only.png', ARTIFACTS).pathname, fullPage: true })
      const uuid = await answered.first().getAttribute('data-uuid')
      const before = commandsSent().length
      t.match(await onPageSocket(9001, { cmd: 'hangup', uuid }), { result_code: 500, error: { id: 'permission_denied' } }, 'hangup refused')
      t.match(await onPageSocket(9002, { cmd: 'transfer', uuid, destination: 'bob' }), { result_code: 500, error: { id: 'permission_denied' } }, 'transfer refused')
      t.ok(await answered.first().isVisible(), 'the call goes on')
      t.equal(commandsSent().length, before, 'the page sent no command of its own')
      // Ended with the token over the HTTP control, for the tests after this one.
      for (const u of reply.body.uuids as string[]) await h.post(`calls/${u}/hangup`, {})
      await page.locator('#empty').waitFor()
      await page.getByRole('button', { name: 'Disconnect' }).click()
      await connect('example.test', 'demo-token-example-test')
      await page.locator('#status').getByText(/^Connected to example.test/).waitFor()
    })

    t.test('after a daemon restart the page reconnects by itself', async (t) => {
      const port = h.daemon.httpPort
      const logged = problems.length
      await h.daemon.stop()
      // The rows are kept, greyed out and marked busy, while it tries again.
      await page.locator('#calls.stale[aria-busy="true"]').waitFor()
      t.match(await page.locator('#status').textContent(), /lost|Connecting|daemon did not give a ticket/)
      const journalDir = mkdtempSync(join(tmpdir(), 'cod-ui-journal-'))
      t.teardown(() => rmSync(journalDir, { recursive: true, force: true }))
      // The API port again (the page reconnects to its origin); every other listener on any free port.
      const again = await startDaemon({ configFile: 'conf/daemon.yaml', logger: silentLogger(), httpPort: port, xmlCurlPort: 0, simulatorPort: 0, journalDir })
      if (!again.ok) throw new Error(again.error.join('\n'))
      t.teardown(() => again.value.stop())
      // Retries back off 1 s, 2 s, 4 s...: a new ticket with the token kept in memory, a new snapshot.
      await page.locator('#status').getByText('Connected to example.test: 0 live channels.').waitFor({ timeout: 30_000 })
      t.notOk(await page.locator('#calls.stale').count(), 'no longer greyed out')
      t.ok(await page.locator('#connect-form').isHidden(), 'no need to type the token again')
      // While the daemon was down, Chromium logged the refused connections; nothing else.
      const downtime = problems.splice(logged)
      t.same(downtime.filter((p) => !/ERR_CONNECTION_REFUSED|WebSocket connection to .* failed/.test(p)), [], 'only refused connections were logged meanwhile')
    })

    t.test('disconnect forgets the token', async (t) => {
      await page.getByRole('button', { name: 'Disconnect' }).click()
      await page.locator('#status').getByText('Disconnected; the token was forgotten.').waitFor()
      t.ok(await page.locator('#connect-form').isVisible())
      t.equal(await page.getByLabel('API token').inputValue(), '')
    })

    t.test('every ticket the page asked for was the read-only monitor ticket', async (t) => {
      const tickets = sent.filter((r) => r.path === '/api/gen_ws_ticket')
      // The wrong token's, the first connection's, watch only's, the one after it, the reconnection's.
      t.ok(tickets.length >= 5, `${tickets.length} tickets asked for`)
      t.same(new Set(tickets.map((r) => r.body)), new Set([JSON.stringify({ uri: MONITOR_URI })]), 'all of them read_only=true')
    })

    t.test('no CSP violation, no script error', async (t) => {
      // The two errors the console may show (Chromium logs every failed load): the wrong token's
      // 401 and the refused transfer's 404 (destination_not_found).
      const expected = [
        /^console error: Failed to load resource: the server responded with a status of 401 \(Unauthorized\) at http:\/\/127\.0\.0\.1:\d+\/api\/gen_ws_ticket$/,
        /^console error: Failed to load resource: the server responded with a status of 404 \(Not Found\) at http:\/\/127\.0\.0\.1:\d+\/api\/calls\/[0-9a-f-]+\/transfer$/,
      ]
      t.same(expected.map((e) => problems.filter((p) => e.test(p)).length), [1, 1], "the wrong token's 401, the refused transfer's 404")
      t.same(problems.filter((p) => !expected.some((e) => e.test(p))), [], 'nothing else: no CSP or Trusted Types violation, no exception, no missing file')
    })
  })
}
