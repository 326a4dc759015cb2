/**
 * Values of the IVR expression language and the rules every operator shares: what is true,
 * how a value is written as text, when two values are equal. Python is the model (IVR authors
 * know it from the Basix documents), with one number type because JSON has one.
 */

/** Everything an expression can produce or read. Objects come from `<GetJSON>` (plain JSON data). */
export type Value = null | boolean | number | string | Value[] | { [key: string]: Value }

export type ValueObject = { [key: string]: Value }

/**
 * A plain data object: made by JSON.parse or an object literal (or with a null prototype).
 * Anything else (class instances, functions) is never looked into, so a value that slipped
 * past the type system cannot expose methods or prototypes to an expression.
 */
export function isPlainObject(v: unknown): v is ValueObject {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false
  const proto: unknown = Object.getPrototypeOf(v)
  return proto === Object.prototype || proto === null
}

/** The type name used in error messages (Python-like words an IVR author recognises). */
export function typeName(v: Value): string {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'list'
  switch (typeof v) {
    case 'boolean':
      return 'boolean'
    case 'number':
      return 'number'
    case 'string':
      return 'string'
    default:
      return 'object'
  }
}

/** Python truthiness: null, false, 0, '', [] and {} are false; everything else is true. */
export function truthy(v: Value): boolean {
  if (v === null) return false
  if (Array.isArray(v)) return v.length > 0
  switch (typeof v) {
    case 'boolean':
      return v
    case 'number':
      return v !== 0
    case 'string':
      return v !== ''
    default:
      return Object.keys(v).length > 0
  }
}

/**
 * `str()`: how a value is written into text, attribute values and `var_` parameters.
 * null is the empty string (a variable that is not set prints as nothing), booleans are
 * `true`/`false`, numbers as JavaScript writes them (`3`, `2.5`), lists and objects as JSON.
 */
export function toText(v: Value): string {
  if (v === null) return ''
  if (typeof v === 'string') return v
  if (typeof v === 'number') return Object.is(v, -0) ? '0' : String(v)
  if (typeof v === 'boolean') return v ? 'true' : 'false'
  return JSON.stringify(v)
}

/** `==`: same type and same content (lists element by element, objects key by key); no coercion. */
export function valuesEqual(a: Value, b: Value): boolean {
  if (a === b) return true
  if (a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    return a.every((x, i) => valuesEqual(x, b[i] as Value))
  }
  if (Array.isArray(b)) return false
  if (typeof a === 'object' && typeof b === 'object') {
    const ka = Object.keys(a)
    if (ka.length !== Object.keys(b).length) return false
    return ka.every((k) => Object.hasOwn(b, k) && valuesEqual(a[k] as Value, b[k] as Value))
  }
  return false
}
