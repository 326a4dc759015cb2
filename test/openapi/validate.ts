/**
 * Checks replies against the OpenAPI document with ajv (JSON Schema 2020-12, the dialect of
 * OpenAPI 3.1): the document is added to ajv whole, and each schema is reached by its JSON
 * pointer, so `$ref`s into components resolve as any OpenAPI tool would resolve them.
 */
import { Ajv2020 } from 'ajv/dist/2020.js'
import addFormatsModule from 'ajv-formats'
import type { JsonObject } from '../../src/api/openapi/json.js'

// ajv-formats is CommonJS with a default export.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020

const escape = (segment: string): string => segment.replace(/~/g, '~0').replace(/\//g, '~1')

export interface DocumentChecker {
  /** The problems of one reply (empty when it matches): status documented, headers, body. */
  checkReply(path: string, method: 'get' | 'post', status: number, headers: Record<string, string>, body: unknown): string[]
  /** The problems of a value against a schema at a JSON pointer of the document. */
  checkAt(pointer: string[], value: unknown): string[]
}

export function documentChecker(doc: JsonObject): DocumentChecker {
  // strict: false: OpenAPI adds keywords of its own (x-http-status, discriminator...).
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false })
  addFormats(ajv)
  ajv.addSchema(doc as object, 'openapi')
  const checkAt = (pointer: string[], value: unknown): string[] => {
    const id = `openapi#/${pointer.map(escape).join('/')}`
    const validate = ajv.getSchema(id)
    if (validate === undefined) return [`no schema at ${id}`]
    if (validate(value) === true) return []
    return (validate.errors ?? []).map((e) => `${e.instancePath || '(root)'} ${e.message ?? ''} ${JSON.stringify(e.params)}`)
  }
  const at = (obj: unknown, ...keys: string[]): unknown => keys.reduce<unknown>((o, k) => (typeof o === 'object' && o !== null ? (o as Record<string, unknown>)[k] : undefined), obj)
  const deref = (v: unknown): unknown => {
    const r = at(v, '$ref')
    return typeof r === 'string' ? at(doc, ...r.slice(2).split('/')) : v
  }
  return {
    checkAt,
    checkReply(path, method, status, headers, body) {
      const responses = at(doc, 'paths', path, method, 'responses')
      if (responses === undefined) return [`${method.toUpperCase()} ${path} is not in the document`]
      const key = String(status)
      const response = deref(at(responses, key))
      if (response === undefined) return [`${method.toUpperCase()} ${path}: status ${status} is not documented`]
      const problems: string[] = []
      for (const [name, h] of Object.entries((at(response, 'headers') ?? {}) as Record<string, unknown>)) {
        const header = deref(h)
        const value = headers[name.toLowerCase()]
        if (value === undefined) {
          if (at(header, 'required') === true) problems.push(`header ${name} is required`)
          continue
        }
        if (at(header, 'schema') !== undefined) {
          const pointer = typeof at(h, '$ref') === 'string' ? [...(at(h, '$ref') as string).slice(2).split('/'), 'schema'] : ['paths', path, method, 'responses', key, 'headers', name, 'schema']
          problems.push(...checkAt(pointer, value).map((p) => `header ${name}: ${p}`))
        }
      }
      const contentType = headers['content-type']?.split(';')[0]?.trim()
      const media = contentType === undefined ? undefined : at(response, 'content', contentType)
      if (media === undefined) return [...problems, `content type ${String(contentType)} is not documented for ${status}`]
      problems.push(...checkAt(['paths', path, method, 'responses', key, 'content', contentType ?? '', 'schema'], body))
      return problems
    },
  }
}
