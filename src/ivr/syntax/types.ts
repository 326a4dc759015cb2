/**
 * The model of a validated IVR document (docs/ivr.md), the parts that do not
 * depend on any one element: positions, attribute values, expressions, the document, limits
 * and errors. Each element's own type lives in its module (elements/<name>.ts), which adds it
 * to `IvrElementTypes`; `IvrElement` is the union of them all.
 *
 * Attributes are typed with their defaults applied, and a value that contains `{{ }}` is kept
 * as a parsed template to be rendered and checked when it runs (`resolveParam` in params.ts
 * applies the same check that validated the literal values).
 */
import type { Expr } from '../expr/ast.js'
import type { Template } from '../expr/template.js'
import type { Result } from '../../util/result.js'

/** Where an element was written: for error messages at validation and at run time. */
export interface SourcePos {
  /** 1-based line and column of the element's `<`. */
  readonly line: number
  readonly column: number
  /** Like `/IVR/GetDigits[2]/Play[1]` (index among siblings of the same name). */
  readonly path: string
}

/** Turns the text of an attribute (or element text) into its typed value, or says what is wrong. */
export interface ValueCheck<T> {
  /** The rule in words, e.g. "a whole number from 1 to 5". */
  readonly rule: string
  readonly convert: (raw: string) => Result<T, string>
}

/**
 * An attribute or text value: known at validation (`literal`, already checked), or a template
 * rendered at run time and then checked with `check` (see resolveParam).
 */
export type Param<T> =
  | { readonly kind: 'literal'; readonly value: T }
  | {
      readonly kind: 'template'
      readonly template: Template
      readonly check: ValueCheck<T>
      /** e.g. `GetDigits timeout`, for the run-time message. */
      readonly label: string
    }

/** An `expr` attribute, parsed at validation so that syntax errors never reach a call. */
export interface ParsedExpr {
  readonly source: string
  readonly ast: Expr
}

/** How a URL of the document is fetched (Redirect, GetJSON, the documents that follow). */
export type HttpMethod = 'POST' | 'GET'

/** What every element has: its name and where it was written. */
export interface ElementBase {
  readonly type: string
  readonly pos: SourcePos
}

/**
 * Element name → element type, filled in by the element modules:
 *
 *   declare module '../syntax/types.js' {
 *     interface IvrElementTypes { Play: Play }
 *   }
 *
 * Declaration merging lets each module add its element without this file importing the
 * modules (they import this file: the other way would be a circle). elements/index.ts holds a
 * module for every name here, or it does not compile.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging (see above)
export interface IvrElementTypes {}

/** Any element that runs in sequence (the content of the root, Sections and branches). */
export type IvrElement = IvrElementTypes[keyof IvrElementTypes]

export interface IvrDocument {
  /** Top-level elements in order, without the Sections. */
  readonly body: readonly IvrElement[]
  /** Top-level Sections by name. */
  readonly sections: ReadonlyMap<string, readonly IvrElement[]>
}

export interface IvrLimits {
  /** Document size in bytes (UTF-8). */
  readonly maxBytes: number
  /** Element nesting, the root counting as 1. */
  readonly maxDepth: number
  /** Elements in the whole document, the root included. */
  readonly maxElements: number
  /** Bytes of one element's text and of one attribute value. */
  readonly maxTextBytes: number
}

export const DEFAULT_IVR_LIMITS: IvrLimits = {
  maxBytes: 256 * 1024,
  maxDepth: 32,
  maxElements: 2000,
  maxTextBytes: 4096,
}

/**
 * Why a document was refused. `reason` is complete and human-readable (position included):
 * it is sent to the document's URL as `Error=` and returned in the API's invalid_xml description.
 */
export interface IvrDocumentError {
  readonly reason: string
  readonly line?: number
  readonly column?: number
  readonly path?: string
}
