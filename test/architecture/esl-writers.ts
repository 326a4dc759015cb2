/**
 * "Only the link writes ESL text" (docs/architecture.md "Who owns what"), as a check over the
 * source: each module of src/ read by TypeScript's parser, its string literals and casts looked
 * at. What it finds in a module not allowed to do that thing:
 *
 * - `protocol-line`: a literal that starts an Event Socket command line (`auth …`, `bgapi …`,
 *   `event json …`, `filter …`, `sendmsg …`: the verbs of mod_event_socket.c parse_command that
 *   take arguments), at its start or after a line break. Only the link's modules write them.
 * - `brand-cast`: a cast to `EslCommand`, `InstantCommand` or `EslApp`, the branded types that
 *   only pbx/commands.ts may make (a cast elsewhere forges a command).
 * - `socket`: node:net's means to open a connection (its default export, `connect`,
 *   `createConnection`, `Socket`), or a `.write(` call in src/pbx/: only pbx/esl-session.ts holds
 *   the Event Socket and writes to it.
 *
 * src/sim/ is not read: it is FreeSWITCH's side of the socket (it reads these lines).
 */
import ts from 'typescript'

type FindingKind = 'protocol-line' | 'brand-cast' | 'socket'

interface Finding {
  readonly file: string
  readonly kind: FindingKind
  readonly text: string
}

/** Which modules may do what (paths from the repository's root). */
export const ALLOWED: Readonly<Record<FindingKind, readonly string[]>> = {
  'protocol-line': [
    // auth
    'src/pbx/esl-session.ts',
    // event json subscriptions; the bgapi/api/sendmsg frames around commands.ts's commands
    'src/pbx/connection.ts',
    // filter
    'src/pbx/event-filter.ts',
  ],
  'brand-cast': ['src/pbx/commands.ts'],
  socket: ['src/pbx/esl-session.ts'],
}

/**
 * An Event Socket command line with arguments, verb by verb as mod_event_socket.c reads them. The
 * arguments are matched too, so that prose starting with the same word ("auth throttle: client
 * blocked", "event listener failed", "api listener") is not taken for a command. An API command
 * (after `api`/`bgapi`) is a template hole, a name with `_` or a digit, or one of the common ones.
 */
const COMMAND_LINE = new RegExp(
  [
    '(user)?auth \\S*$',
    '(bg)?api ($|[a-z0-9]*[_0-9][a-z0-9_]*( |$)|(originate|hash|show|status|eval|expand|system|bg_system|reloadxml|fsctl|sofia|version|uptime|load|unload|reload|strftime|regex|echo|pause|sched_api)( |$))',
    'event (plain|json|xml)( |$)',
    'nixevent ',
    'filter (delete )?($|\\S+ )',
    'sendmsg ($|[0-9a-f-]{8,})',
    'sendevent [A-Z_]+',
    'myevents ',
    'divert_events (on|off)',
    'log (console|debug|info|notice|warning|err|crit|alert|[0-7])$',
  ]
    .map((v) => `^(${v})`)
    .join('|'),
)

const BRANDS = /\b(EslCommand|InstantCommand|EslApp)\b/
const SOCKET_MAKERS = new Set(['connect', 'createConnection', 'Socket'])

/** Whether `text`, a literal or one piece of a template, starts a command line (at its start when `atLineStart`, or after a line break). */
function startsCommandLine(text: string, atLineStart: boolean): boolean {
  const lines = text.split('\n')
  return lines.some((line, i) => (i > 0 || atLineStart) && COMMAND_LINE.test(line))
}

/** What the module `file` (a path from the repository's root), with source `source`, does that only some modules may. */
export function findEslWriting(file: string, source: string): Finding[] {
  const sf = ts.createSourceFile(file, source, ts.ScriptTarget.Latest, true)
  const found: Finding[] = []
  const add = (kind: FindingKind, node: ts.Node) => {
    if (!ALLOWED[kind].includes(file)) found.push({ file, kind, text: node.getText(sf).slice(0, 80) })
  }
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateHead(node)) {
      if (startsCommandLine(node.text, true)) add('protocol-line', node)
    } else if (ts.isTemplateMiddle(node) || ts.isTemplateTail(node)) {
      if (startsCommandLine(node.text, false)) add('protocol-line', node)
    } else if ((ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) && BRANDS.test(node.type.getText(sf))) {
      add('brand-cast', node)
    } else if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && /^(node:)?(net|tls)$/.test(node.moduleSpecifier.text)) {
      const clause = node.importClause
      if (clause !== undefined && !clause.isTypeOnly) {
        const named = clause.namedBindings
        if (clause.name !== undefined) add('socket', node)
        else if (named !== undefined && ts.isNamespaceImport(named)) add('socket', node)
        else if (named !== undefined && named.elements.some((e) => !e.isTypeOnly && SOCKET_MAKERS.has((e.propertyName ?? e.name).text))) add('socket', node)
      }
    } else if (file.startsWith('src/pbx/') && ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && node.expression.name.text === 'write') {
      add('socket', node)
    }
    ts.forEachChild(node, visit)
  }
  visit(sf)
  return found
}
