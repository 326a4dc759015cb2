/**
 * Values that a JSON Schema of the OpenAPI document takes, as fast-check arbitraries, for the
 * property test (issue 26 item 4). Written here rather than taken from npm: json-schema-faker
 * (the candidate looked at) draws strings with randexp from one pattern, so a string with
 * several patterns (zod's allOf) or an object whose rule is an anyOf of `required` comes out
 * invalid, and its randomness is not fast-check's seed. This covers the subset of JSON Schema
 * the document uses, and throws on anything else so that a new keyword is noticed:
 *
 * - `$ref` (into the document), `const`, `enum`, `anyOf` of alternatives;
 * - objects: `properties`, `required`, `additionalProperties: false`, `anyOf` of `required`,
 *   `minProperties`;
 * - strings: `pattern`s (its own, `allOf` and the chosen `anyOf` branch), `minLength`,
 *   `maxLength` (code points, as JSON Schema counts), `format` (left to the caller's check);
 * - integers (`minimum`, `maximum`), booleans.
 *
 * A string is drawn from its longest pattern (fc.stringMatching) and filtered by the others and
 * its lengths; free text is drawn from all of Unicode. Callers still check each value against the document: the generator aims at the
 * schema, the validator says whether it hit.
 */
import fc from 'fast-check'

type Schema = Readonly<Record<string, unknown>>

export interface ArbitraryOptions {
  /**
   * Values mixed in for properties of these names (each must itself be schema-valid): records
   * of the test's directory, so that the daemon's checks after a lookup run too.
   */
  readonly hints?: Readonly<Record<string, readonly unknown[]>>
}

const KNOWN = new Set([
  '$ref',
  'const',
  'enum',
  'anyOf',
  'allOf',
  'type',
  'properties',
  'required',
  'additionalProperties',
  'minProperties',
  'pattern',
  'minLength',
  'maxLength',
  'minimum',
  'maximum',
  'format',
  'description',
  'title',
  'items',
  'minItems',
  'maxItems',
  'uniqueItems',
])

const codePoints = (s: string): number => [...s].length

/** A pattern that is one negated class over the whole value: `^[^...]*$`. */
const FREE_TEXT = /^\^\[\^[^\]]*\]\*\$$/

/**
 * A character of free text: mostly printable ASCII, else any other code point but controls and
 * surrogates, outside the BMP too (fast-check's own 'binary' unit is ten times slower).
 */
const TEXT_CHAR = fc
  .oneof(
    { weight: 4, arbitrary: fc.integer({ min: 0x20, max: 0x7e }) },
    { weight: 2, arbitrary: fc.integer({ min: 0xa0, max: 0xd7ff }) },
    { weight: 1, arbitrary: fc.integer({ min: 0xe000, max: 0xfffd }) },
    { weight: 1, arbitrary: fc.integer({ min: 0x10000, max: 0x10ffff }) },
  )
  .map((c) => String.fromCodePoint(c))

export function arbitraryOf(doc: unknown, schema: Schema, opts: ArbitraryOptions = {}): fc.Arbitrary<unknown> {
  const deref = (s: Schema): Schema => {
    const ref = s['$ref']
    if (typeof ref !== 'string') return s
    const target = ref
      .slice(2)
      .split('/')
      .reduce<unknown>((o, k) => (o as Record<string, unknown>)[k], doc)
    return deref(target as Schema)
  }

  const strings = (s: Schema, branch: Schema = {}): fc.Arbitrary<string> => {
    const patterns = [s['pattern'], ...((s['allOf'] as Schema[] | undefined) ?? []).map((p) => p['pattern']), branch['pattern']].filter(
      (p): p is string => typeof p === 'string',
    )
    const bound = (key: 'minLength' | 'maxLength', pick: (a: number, b: number) => number): number | undefined => {
      const values = [s[key], branch[key]].filter((v): v is number => typeof v === 'number')
      return values.length === 0 ? undefined : values.reduce(pick)
    }
    const min = bound('minLength', Math.max) ?? 0
    const max = bound('maxLength', Math.min) ?? Number.POSITIVE_INFINITY
    // The driver: the longest pattern that says more than "none of these characters".
    const [driver, ...others] = [...patterns].sort((a, b) => Number(FREE_TEXT.test(a)) - Number(FREE_TEXT.test(b)) || b.length - a.length)
    // Free text (no pattern, or only "none of these characters"): any code point, not the
    // printable ASCII fc.stringMatching draws a negated class from, so non-ASCII text is tried.
    const freeText = driver === undefined || FREE_TEXT.test(driver)
    const checks = (freeText ? patterns : others).map((p) => new RegExp(p, 'u'))
    const base = freeText ? fc.string({ unit: TEXT_CHAR, minLength: min, maxLength: Math.min(max, 64) }) : fc.stringMatching(new RegExp(driver, 'u'))
    return base.filter((v) => checks.every((re) => re.test(v)) && codePoints(v) >= min && codePoints(v) <= max)
  }

  const objects = (s: Schema): fc.Arbitrary<Record<string, unknown>> => {
    const props = (s['properties'] as Record<string, Schema> | undefined) ?? {}
    const model: Record<string, fc.Arbitrary<unknown>> = {}
    for (const [name, p] of Object.entries(props)) {
      const hinted = opts.hints?.[name]
      model[name] = hinted === undefined ? of(p) : fc.oneof({ arbitrary: of(p), weight: 1 }, { arbitrary: fc.constantFrom(...hinted), weight: 2 })
    }
    const required = (s['required'] as string[] | undefined) ?? []
    const anyOf = (s['anyOf'] as Schema[] | undefined) ?? []
    const variants = anyOf.length === 0 ? [required] : anyOf.map((b) => [...required, ...((b['required'] as string[] | undefined) ?? [])])
    const minProperties = typeof s['minProperties'] === 'number' ? s['minProperties'] : 0
    return fc.oneof(...variants.map((keys) => fc.record(model, { requiredKeys: keys }))).filter((o) => Object.keys(o).length >= minProperties)
  }

  function of(schemaOrRef: Schema): fc.Arbitrary<unknown> {
    const s = deref(schemaOrRef)
    const unknown = Object.keys(s).filter((k) => !KNOWN.has(k))
    if (unknown.length > 0) throw new Error(`the generator does not know ${unknown.join(', ')}: ${JSON.stringify(s).slice(0, 200)}`)
    if ('const' in s) return fc.constant(s['const'])
    if (Array.isArray(s['enum'])) return fc.constantFrom(...(s['enum'] as unknown[]))
    const anyOf = s['anyOf'] as Schema[] | undefined
    switch (s['type']) {
      case 'object':
        return objects(s)
      case 'string':
        // anyOf under a string: the forms it may take, each with its own pattern.
        return anyOf === undefined ? strings(s) : fc.oneof(...anyOf.map((b) => strings(s, b)))
      case 'integer':
        return fc.integer({ min: (s['minimum'] as number | undefined) ?? -1_000_000, max: (s['maximum'] as number | undefined) ?? 1_000_000 })
      case 'boolean':
        return fc.boolean()
      case 'array': {
        const items = of((s['items'] as Schema | undefined) ?? {})
        const bounds = { minLength: (s['minItems'] as number | undefined) ?? 0, maxLength: Math.min((s['maxItems'] as number | undefined) ?? 8, 8) }
        // uniqueItems: distinct by value, as JSON Schema compares them.
        return s['uniqueItems'] === true ? fc.uniqueArray(items, { ...bounds, selector: (v) => JSON.stringify(v) }) : fc.array(items, bounds)
      }
      case undefined:
        if (anyOf !== undefined) return fc.oneof(...anyOf.map(of))
    }
    throw new Error(`the generator does not know this schema: ${JSON.stringify(s).slice(0, 200)}`)
  }

  return of(schema)
}
