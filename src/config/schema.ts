/**
 * The configuration contract operators write (docs/design.md "Configuration contract").
 * Every field is validated here; unknown keys are refused so that a typo cannot pass silently.
 * Identifier patterns are deliberately narrow: directory values end up in SIP usernames,
 * dial strings and XML documents, and a narrow alphabet is the first line of defence.
 */
import { isIP } from 'node:net'
import { z } from 'zod'
import { parseCidrList } from '../net/address-guard.js'

export const NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/
export const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/
export const DIGITS_RE = /^[0-9]{1,32}$/
/**
 * PSTN numbers (docs/design.md "HTTP API decisions", Numbers): optional +, then digits, * and #, 2
 * to 32 characters.
 */
export const PSTN_RE = /^\+?[0-9*#]{1,32}$/
export const isPstnNumber = (s: string): boolean => s.length >= 2 && s.length <= 32 && PSTN_RE.test(s)
/** ivr.media_dir by default: where packaged FreeSWITCH keeps the sound_prefix of FreeSWITCH's vanilla vars.xml. */
const DEFAULT_MEDIA_DIR = '/usr/share/freeswitch/sounds/en/us/callie'
export const DOMAIN_RE = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/
const TOKEN_RE = /^(sha256:[0-9a-f]{64}|[\x21-\x7e]{16,256})$/
// eslint-disable-next-line no-control-regex -- refusing control characters is the point
const LABEL_RE = /^[^\x00-\x1f\x7f]{1,128}$/

const name = z.string().regex(NAME_RE, 'must be 1-64 of A-Z a-z 0-9 . _ - starting with a letter or digit')
const id = z.string().regex(ID_RE, 'must be 1-64 of A-Z a-z 0-9 _ - starting with a letter or digit')
const digits = z.string().regex(DIGITS_RE, 'must be 1-32 digits')
const pstn = z.string().refine(isPstnNumber, 'must be an optional + then 2-32 digits, * or #')
const label = z.string().regex(LABEL_RE, 'must be 1-128 characters without control characters')
const seconds = (max: number) => z.number().int('must be a whole number').positive('must be positive').max(max)
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http or https URL' })
/** An address to listen on: an IP address, or a host name (resolved by the listener). */
const listenHost = z
  .string()
  .refine((h) => isIP(h) !== 0 || DOMAIN_RE.test(h), 'must be an IP address (127.0.0.1, ::1, 0.0.0.0) or a host name to listen on')

/**
 * How a simulated terminal or PSTN number behaves (docs/design.md "Configuration contract",
 * Simulated terminal and PSTN behaviours).
 */
export const simBehaviourSchema = z
  .strictObject({
    answer_after: z.number().min(0).max(3600).optional(),
    behaviour: z.enum(['no_answer', 'busy', 'reject', 'unregistered']).optional(),
    hangup_after: z.number().min(0).max(86400).optional(),
    /** DTMF digits sent once the call is answered and a digit collection runs (IVR tests). */
    dtmf: z.string().regex(/^[0-9*#A-D]{1,64}$/, 'must be DTMF digits 0-9 * # A-D').optional(),
    /** Seconds the far end talks once a `record` or a speech detection runs on its call (IVR Record and GetInput tests); absent: it is silent. */
    talk: z.number().min(0.1).max(3600).optional(),
    /**
     * The far end is a fax machine (IVR SendFax and ReceiveFax tests, src/sim/apps/fax.ts): it
     * receives what `txfax` sends, and sends this many pages when `rxfax` runs on its call (0: a
     * machine that sends nothing). Absent: not a fax machine, both time out as on FreeSWITCH.
     */
    fax_pages: z.number().int().min(0).max(100).optional(),
  })
  .refine((b) => (b.answer_after === undefined) !== (b.behaviour === undefined), {
    message: 'give exactly one of answer_after or behaviour',
  })
  .refine((b) => b.hangup_after === undefined || b.answer_after !== undefined, {
    message: 'hangup_after needs answer_after',
  })
export type SimBehaviour = z.infer<typeof simBehaviourSchema>

/**
 * Call recording (issue 28, docs/recording.md). A domain always has a policy (default: never,
 * 30 days); a group or a user may have one of its own, absent meaning "the next less specific
 * one applies" (src/recording/policy.ts says which wins).
 */
export const RECORDING_MODES = ['never', 'always', 'on_request'] as const
export type RecordingMode = (typeof RECORDING_MODES)[number]
const recordingMode = z.enum(RECORDING_MODES, 'must be "never", "always" or "on_request"')
const retentionDays = z.number('must be a whole number of days from 1 to 3650').int('must be a whole number of days from 1 to 3650').min(1, 'must be a whole number of days from 1 to 3650').max(3650, 'must be a whole number of days from 1 to 3650')
const domainRecordingSchema = z
  .strictObject({
    mode: recordingMode.default('never'),
    /** Recordings older than this are deleted, file and record (src/recording/retention.ts). */
    retention_days: retentionDays.default(30),
    /** Where finished recordings' records are POSTed when a request names no recording_callback_url. */
    callback_url: httpUrl.optional(),
  })
  .prefault({})
/** A group's or a user's own policy: the mode is what it is for; retention_days absent = the domain's. */
const ownRecordingSchema = z.strictObject({
  mode: recordingMode,
  retention_days: retentionDays.optional(),
})
export type DomainRecordingConfig = z.infer<typeof domainRecordingSchema>
export type OwnRecordingConfig = z.infer<typeof ownRecordingSchema>

const userSchema = z.strictObject({
  id,
  name,
  label: label.optional(),
  extension: digits.optional(),
  did: pstn.optional(),
  email: z.email('must be an e-mail address').max(254).optional(),
  password: z.string().regex(/^[\x21-\x7e]{4,128}$/, 'must be 4-128 printable ASCII characters without spaces'),
  sim: z.strictObject({ terminals: z.array(simBehaviourSchema).max(16) }).optional(),
  recording: ownRecordingSchema.optional(),
})

/**
 * A group's ticketing integration (issue 28 item 5, docs/recording.md "Ticketing"): every call made
 * for the group is told to this URL (call.started, call.answered, call.ended), signed with `secret`.
 */
const ticketWebhookSchema = z.strictObject({
  url: httpUrl,
  secret: z.string().min(16, 'must be at least 16 characters').max(256),
})

/**
 * Issue 31: how a call_group rings the group's members. `hunt`: one member at a time, in order
 * (origination/hunt.ts); `ring_all`: every registered terminal of every member at once, in one
 * originate (origination/ring-all.ts).
 */
export const GROUP_STRATEGIES = ['hunt', 'ring_all'] as const
export type GroupStrategy = (typeof GROUP_STRATEGIES)[number]
const strategy = z.enum(GROUP_STRATEGIES)

const groupSchema = z
  .strictObject({
    id,
    name,
    label: label.optional(),
    type: z.enum(['HUNT', 'CALL_CENTER']).default('HUNT'),
    extension: digits.optional(),
    did: pstn.optional(),
    /** User names (or ids), in hunt order. */
    members: z.array(z.string()).max(500),
    answer_timeout: seconds(3600).default(60),
    member_answer_timeout: seconds(3600).default(15),
    /** How a call_group rings the members when the request does not say. */
    strategy: strategy.default('hunt'),
    /** The strategies a call_group request may choose (its `strategy`); absent: only the group's own. */
    strategies: z.array(strategy).min(1).optional(),
    recording: ownRecordingSchema.optional(),
    ticket_webhook: ticketWebhookSchema.optional(),
  })
  .superRefine((g, ctx) => {
    if (g.strategies === undefined) return
    if (new Set(g.strategies).size !== g.strategies.length) ctx.addIssue({ code: 'custom', path: ['strategies'], message: 'must not list a strategy twice' })
    // A request without `strategy` gets the group's own: it must be one the group allows.
    if (!g.strategies.includes(g.strategy)) {
      ctx.addIssue({ code: 'custom', path: ['strategies'], message: `must include the group's own strategy (${g.strategy})` })
    }
  })
  // Always a list after loading, so readers never re-derive the default.
  .transform((g) => ({ ...g, strategies: g.strategies ?? [g.strategy] }))

const extensionSchema = z.strictObject({
  number: digits,
  xml_url: httpUrl,
})

const tokenSchema = z.string().regex(TOKEN_RE, 'must be "sha256:<64 lowercase hex>" or 16-256 printable ASCII characters')

export const domainSchema = z.strictObject({
  name: z.string().regex(DOMAIN_RE, 'must be a DNS domain name'),
  api_tokens: z.array(tokenSchema).min(1, 'at least one token'),
  /** ON_THE_FLY_IVR_ALLOWED: xml_url: destinations; CTI_PSTN_TRANSFER_ALLOWED: browser (ticket) CTI connections may transfer to PSTN numbers. */
  privileges: z.array(z.enum(['ON_THE_FLY_IVR_ALLOWED', 'CTI_PSTN_TRANSFER_ALLOWED'])).default([]),
  channel_limit: z.number().int().min(0).max(100000),
  /**
   * Issue 13 D3: seconds a destination (a user's terminals, a PSTN number) rings for an answered
   * leg before that leg is hung up NO_ANSWER (the dialplan's call_timeout). Groups use their own.
   */
  destination_timeout: z.number().int().min(1).max(3600).default(60),
  /**
   * Issue 29: the longest a call of this domain may last once its originating leg answered,
   * seconds (1 to 86400), unless a request's time_limit is shorter; a request asking for more is
   * refused (api/call-limits.ts). Absent: no limit of the domain's.
   */
  max_call_seconds: seconds(86_400).optional(),
  /**
   * Issue 31: waiting for a free channel (a request's wait_ms; origination/channel-wait.ts):
   * the longest a request may ask to wait, and how many of the domain's requests may wait at once.
   */
  limits: z
    .strictObject({
      max_wait_ms: z.number().int().min(0).max(30_000).default(30_000),
      max_waiting: z.number().int().min(0).max(10_000).default(100),
    })
    .default({ max_wait_ms: 30_000, max_waiting: 100 }),
  gateway: name,
  calling_numbers: z.array(pstn).default([]),
  callback_secret: z.string().min(16, 'must be at least 16 characters').max(256).optional(),
  /** IANA time zone for the IVR's hour()/weekday()/date(). */
  time_zone: z
    .string()
    .refine((tz) => {
      try {
        new Intl.DateTimeFormat('en-US', { timeZone: tz })
        return true
      } catch {
        return false
      }
    }, 'must be an IANA time zone such as Asia/Tokyo')
    .default('UTC'),
  users: z.array(userSchema).default([]),
  groups: z.array(groupSchema).default([]),
  extensions: z.array(extensionSchema).default([]),
  recording: domainRecordingSchema,
  sim: z
    .strictObject({
      pstn: z.record(z.string(), simBehaviourSchema).default({}),
    })
    .optional(),
})

export type DomainConfig = z.infer<typeof domainSchema>
export type UserConfig = z.infer<typeof userSchema>
export type GroupConfig = z.infer<typeof groupSchema>
export type ExtensionConfig = z.infer<typeof extensionSchema>

/** `simulator` starts the built-in simulator; `freeswitch` connects to a real FreeSWITCH. */
const FREESWITCH_MODES = ['simulator', 'freeswitch'] as const

/** An allow-list of the outbound address guard (src/net/address-guard.ts): CIDRs, validated entry by entry. */
const cidrList = z
  .array(z.string())
  .default([])
  .superRefine((list, ctx) => {
    const parsed = parseCidrList(list)
    if (!parsed.ok) ctx.addIssue({ code: 'custom', message: parsed.error })
  })

export const daemonSchema = z.strictObject({
  http: z
    .strictObject({
      host: z.string().default('127.0.0.1'),
      port: z.number().int().min(0).max(65535).default(8080),
      prefix: z
        .string()
        .regex(/^(\/[A-Za-z0-9._-]+)*$/, 'must be empty or like /api')
        .default('/api'),
      /** Largest accepted request body (bytes). Inline IVR documents are the big ones. */
      body_limit: z.number().int().min(1024).max(4 * 1024 * 1024).default(512 * 1024),
      /** Time a client has to send a whole request, headers and body (slow bodies are cut: src/daemon.ts). */
      request_timeout_ms: z.number().int().min(1000).max(300000).default(30000),
      /** Failed authentications per client address before 429 (src/api/throttle.ts). */
      auth_throttle: z
        .strictObject({
          max_failures: z.number().int().min(1).max(10000).default(10),
          window_ms: z.number().int().min(1000).max(86400000).default(60000),
          max_clients: z.number().int().min(16).max(1000000).default(10000),
        })
        .prefault({}),
      /**
       * HTTPS on the API listener (docs/deploy.md "HTTPS"): PEM files, relative to daemon.yaml's
       * folder; read and checked as a pair by the loader (src/net/tls.ts), again at each reload.
       * Absent: plain HTTP (behind a TLS proxy, or on a trusted network).
       */
      tls: z
        .strictObject({
          cert_file: z.string({ error: (i) => (i.input === undefined ? 'is required: the PEM certificate (chain) file' : 'must be a file path') }).min(1, 'must be a file path'),
          key_file: z.string({ error: (i) => (i.input === undefined ? 'is required: the PEM private key file' : 'must be a file path') }).min(1, 'must be a file path'),
        })
        .optional(),
    })
    .prefault({}),
  // An absent section reads as an empty one, so that the refusal names the missing key
  // (freeswitch.mode) rather than the section.
  freeswitch: z.preprocess(
    (section) => section ?? {},
    z.strictObject({
      /**
       * Required, no default: a daemon meant for a real FreeSWITCH that forgot the key would
       * otherwise start its simulator and answer every call as if it were placed.
       */
      mode: z.enum(FREESWITCH_MODES, {
        error: (issue) =>
          issue.input === undefined
            ? 'is required: "simulator" (the built-in simulator) or "freeswitch" (a real FreeSWITCH)'
            : 'must be "simulator" or "freeswitch"',
      }),
      host: z.string().default('127.0.0.1'),
      port: z.number().int().min(0).max(65535).default(8021),
      password: z.string().min(1).default('ClueCon'),
      /** SIP profile used for user legs and PSTN gateways. */
      sip_profile: name.default('internal'),
      /** Time allowed for one ESL command round trip (ms). */
      command_timeout_ms: z.number().int().min(100).max(60000).default(5000),
      /**
       * Originate legs started per second at most (origination/pace.ts). Absent: read from
       * FreeSWITCH's own `sessions-per-second` at each connection and kept below it
       * (docs/engine.md "Pacing"). Set above FreeSWITCH's and FreeSWITCH refuses the excess.
       */
      max_originates_per_second: z.number().int().min(1).max(100000).optional(),
    }),
  ),
  xml_curl: z.strictObject({
    path: z
      .string()
      .regex(/^(\/[A-Za-z0-9._-]+)+$/, 'must be a path like /freeswitch')
      .default('/freeswitch'),
    username: z.string().regex(/^[\x21-\x39\x3b-\x7e]{1,64}$/, 'must be printable ASCII without ":"'),
    password: z.string().regex(/^[\x21-\x7e]{8,128}$/, 'must be 8-128 printable ASCII characters'),
    /**
     * The listener of FreeSWITCH's documents, apart from the API's (docs/deploy.md "Listeners"):
     * the directory holds every SIP password, so it is on loopback unless the operator says otherwise.
     */
    host: listenHost.default('127.0.0.1'),
    /** Its port (0: any free port, for tests); must differ from http.port (checked below). */
    port: z.number().int().min(0).max(65535).default(8081),
    /** Where FreeSWITCH reaches this listener when not at host:port (a proxy, a container's name): the standalone simulator's default. */
    base_url: httpUrl.optional(),
  }),
  directory: z.string().min(1).default('domains'),
  callbacks: z
    .strictObject({
      timeout_ms: z.number().int().min(100).max(60000).default(5000),
      /** Deprecated and ignored (retries go by time: give_up_after_ms); accepted so that older files load. */
      max_attempts: z.number().int().min(1).max(20).optional(),
      backoff_initial_ms: z.number().int().min(10).max(60000).default(1000),
      backoff_max_ms: z.number().int().min(10).max(3600000).default(600000),
      /** Retries go on until this long after the result was handed over; then it is a dead letter. */
      give_up_after_ms: z.number().int().min(1000).max(30 * 86400000).default(86400000),
      concurrency_per_domain: z.number().int().min(1).max(256).default(8),
      /** Deprecated: a spool file an older version left here is moved into the journal at start. */
      spool_file: z.string().min(1).optional(),
      /** CIDR ranges that callbacks may reach even though the address guard refuses them (loopback/private...). */
      allow: cidrList,
    })
    .prefault({}),
  journal: z
    .strictObject({
      /** Folder of the result journal; relative to daemon.yaml's folder. Default: `journal` beside it. */
      dir: z.string().min(1).optional(),
      /** false only to measure the journal's cost (bench/): a crash then loses pending results. */
      enabled: z.boolean().default(true),
    })
    .prefault({}),
  recording: z
    .strictObject({
      /** Folder of the recordings (src/recording/); relative to daemon.yaml's folder. Default: `recordings` beside the journal's folder. */
      dir: z.string().min(1).optional(),
    })
    .prefault({}),
  hunt: z
    .strictObject({
      concurrency_per_domain: z.number().int().min(1).max(10000).default(50),
    })
    .prefault({}),
  ivr: z
    .strictObject({
      /** CIDR ranges that IVR fetches may reach even though they are loopback/private. */
      fetch_allow: cidrList,
      /**
       * The prompt folder on the FreeSWITCH host: `<Play>` file names are relative to it
       * (src/ivr/elements/audio-source.ts). The default is the vanilla configuration's
       * sound_prefix on a packaged FreeSWITCH (en/us/callie).
       */
      media_dir: z
        .string()
        .regex(/^(\/[A-Za-z0-9_-][A-Za-z0-9_.-]*)+$/, 'must be an absolute folder path of A-Z a-z 0-9 _ . - names, without a trailing /')
        .refine((d) => !d.split('/').some((s) => s === '..' || s === '.'), 'must not contain "." or ".." folders')
        .default(DEFAULT_MEDIA_DIR),
      /**
       * The fax folder, one sub-folder per domain: `<SendFax>` sends TIFFs from it and
       * `<ReceiveFax>` writes into its `received_faxes/` (src/ivr/fax/). Relative to daemon.yaml's
       * folder; the daemon and FreeSWITCH must both reach it at this path. Default `faxes`.
       */
      fax_dir: z.string().min(1).optional(),
      /** Days a received fax is kept (swept at start and hourly: src/ivr/fax/retention.ts). */
      fax_retention_days: z.number().int().min(1).max(3650).default(30),
      /**
       * Speech recognition for `<GetInput>` (src/ivr/elements/get-input.ts): FreeSWITCH's
       * `play_and_detect_speech` with this ASR engine. Absent: a GetInput is a runtime error
       * naming this setting.
       */
      asr: z
        .strictObject({
          /** An ASR interface FreeSWITCH has: `test` (mod_test), `unimrcp:<profile>`, ... */
          engine: z
            .string()
            .regex(/^[A-Za-z0-9_-]{1,64}(:[A-Za-z0-9_.-]{1,64})?$/, 'must be an ASR engine name, optionally with :<profile> (A-Z a-z 0-9 _ - .)')
            .optional(),
          /** The grammar loaded for every recognition. */
          grammar: z
            .string()
            .regex(/^[A-Za-z0-9_.:/@-]{1,256}$/, 'must be a grammar name or URI (A-Z a-z 0-9 _ . : / @ -)')
            .default('builtin:speech/transcribe'),
          /** Engine parameters passed with every recognition (`{name=value,...}`). */
          params: z
            .record(
              z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'parameter names are 1-64 of A-Z a-z 0-9 _ . -'),
              z.string().regex(/^[A-Za-z0-9_.:/@+-]{0,256}$/, 'parameter values are up to 256 of A-Z a-z 0-9 _ . : / @ + -'),
            )
            .default({}),
        })
        .prefault({}),
    })
    .prefault({}),
  cti: z
    .strictObject({
      /** Connections per (domain, user, app_name); a third is refused unless forced. */
      max_connections_per_user: z.number().int().min(1).max(100).default(2),
      ticket_ttl_ms: z.number().int().min(1000).max(600000).default(10000),
      ping_interval_ms: z.number().int().min(1000).max(600000).default(30000),
      /** A subscriber whose unsent buffer passes this is closed (slow consumer). */
      max_buffered_bytes: z.number().int().min(1024).max(64 * 1024 * 1024).default(1024 * 1024),
    })
    .prefault({}),
  /**
   * Several boxes sharing limits, registrations, CTI and results through Redis (docs/cluster.md).
   * Absent: one box, everything in process, and nothing of src/cluster/ is loaded.
   */
  cluster: z
    .strictObject({
      /** redis://[user:password@]host:port[/db] (or rediss://): the Redis (or Valkey) every node shares. */
      redis: z.url({ protocol: /^rediss?$/, error: 'must be a redis:// or rediss:// URL' }),
      /** This node's name among the nodes: unique, stable across restarts (its leases and results are filed under it). */
      node_id: z.string().regex(ID_RE, 'must be 1-64 characters A-Z a-z 0-9 _ -, starting with a letter or digit'),
      /** A node whose lease is not renewed for this long is dead: its channels stop counting, a peer delivers its results. */
      lease_ms: z.number().int().min(1000).max(60000).default(5000),
      /** Where peers reach this node's API (forwarded call_user, CTI commands). Default: the API listener's own address. */
      api_url: httpUrl.optional(),
    })
    .optional(),
  log: z
    .strictObject({
      level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
      /** The longest a log line waits before it is written (src/util/logger.ts says why lines wait); 0: each line at once. */
      flush_ms: z.number().int().min(0).max(10000).default(100),
    })
    .prefault({}),
}).superRefine((d, ctx) => {
  // Two listeners on one port: the second could not start, or (other addresses) the two would
  // be told apart by address only, which a wildcard on either side undoes.
  if (d.xml_curl.port !== 0 && d.xml_curl.port === d.http.port) {
    ctx.addIssue({ code: 'custom', path: ['xml_curl', 'port'], message: `must differ from http.port (${d.http.port}): FreeSWITCH's documents have a listener of their own` })
  }
})

export type DaemonConfig = z.infer<typeof daemonSchema>
