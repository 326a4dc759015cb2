/**
 * The model of a validated IVR document (docs/ivr.md; spec/ivr-xml.md). Every element is one
 * variant of `IvrElement`, attributes are typed with their defaults applied, and a value that
 * contains `{{ }}` is kept as a parsed template to be rendered and checked when it runs
 * (`resolveParam` in params.ts applies the same check that validated the literal values).
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

export type HttpMethod = 'POST' | 'GET'
export type HangupReason = 'rejected' | 'busy'

/** Transfer's failureAction: fallback URLs, or a Section of this document. */
export type FailureAction =
  | { readonly kind: 'urls'; readonly urls: readonly string[] }
  | { readonly kind: 'section'; readonly name: string }

interface Base {
  readonly pos: SourcePos
}

export interface Answer extends Base {
  readonly type: 'Answer'
}

export interface Play extends Base {
  readonly type: 'Play'
  /** 1-5, default 1. */
  readonly loop: Param<number>
  /** DTMF keys that stop the playback; '' (default) means none. */
  readonly terminators: Param<string>
  /** An audio file path or an http(s) URL (the element's text). */
  readonly source: Param<string>
}

export interface Speak extends Base {
  readonly type: 'Speak'
  /** Default 'ja-JP'. */
  readonly language: Param<string>
  /** Absent: the TTS engine's default voice. */
  readonly voice: Param<string> | undefined
  /** 1-5, default 1. */
  readonly loop: Param<number>
  readonly text: Param<string>
}

export interface Wait extends Base {
  readonly type: 'Wait'
  /** Seconds, fractions allowed, 0-3600, default 1. */
  readonly length: Param<number>
}

/** What GetDigits plays: Play, Speak and Wait children. */
export type Prompt = Play | Speak | Wait

export interface GetDigits extends Base {
  readonly type: 'GetDigits'
  /** Absent: execution goes on with the next element. */
  readonly action: Param<readonly string[]> | undefined
  /** Seconds to wait for the first key, 1-300, default 5. */
  readonly timeout: Param<number>
  /** Seconds between keys, 1-300, default 5. */
  readonly interdigitTimeout: Param<number>
  /** One key, or '' for none; default '#'. */
  readonly finishOnKey: Param<string>
  /** 1-99, default 99. */
  readonly numDigits: Param<number>
  /** Default '0123456789*#'. */
  readonly validDigits: Param<string>
  /** 1-10, default 1. */
  readonly maxTries: Param<number>
  /** Default false. */
  readonly playBeep: Param<boolean>
  /** Children without `purpose`, in document order: played to ask for input. */
  readonly prompts: readonly Prompt[]
  /** Children with `purpose="alert"`, in document order: played after invalid input. */
  readonly alerts: readonly Prompt[]
}

export interface SetVar extends Base {
  readonly type: 'Set'
  readonly var: string
  readonly value: { readonly kind: 'val'; readonly val: Param<string> } | { readonly kind: 'expr'; readonly expr: ParsedExpr }
}

export interface If extends Base {
  readonly type: 'If'
  readonly expr: ParsedExpr
  readonly then: readonly IvrElement[]
  /** [] when there is no <Else>. */
  readonly else: readonly IvrElement[]
}

export interface SwitchCase {
  readonly pos: SourcePos
  /** Compared with str() of the Switch value. */
  readonly val: Param<string>
  readonly body: readonly IvrElement[]
}

export interface Switch extends Base {
  readonly type: 'Switch'
  readonly expr: ParsedExpr
  readonly cases: readonly SwitchCase[]
  /** [] when there is no <Default>. */
  readonly default: readonly IvrElement[]
}

export interface CondClause {
  readonly pos: SourcePos
  readonly expr: ParsedExpr
  readonly body: readonly IvrElement[]
}

export interface Cond extends Base {
  readonly type: 'Cond'
  readonly clauses: readonly CondClause[]
  /** [] when there is no <Else>. */
  readonly else: readonly IvrElement[]
}

export interface GoTo extends Base {
  readonly type: 'GoTo'
  /** A Section name; checked to exist at validation when literal. */
  readonly section: Param<string>
}

export interface SetErrorHandler extends Base {
  readonly type: 'SetErrorHandler'
  readonly section: Param<string>
}

export interface GetJSON extends Base {
  readonly type: 'GetJSON'
  readonly var: string
  /** One URL or a comma list tried in order. */
  readonly url: Param<readonly string[]>
  /** Default POST. */
  readonly method: Param<HttpMethod>
}

export interface Redirect extends Base {
  readonly type: 'Redirect'
  /** Default POST. */
  readonly method: Param<HttpMethod>
  readonly url: Param<readonly string[]>
}

export interface Transfer extends Base {
  readonly type: 'Transfer'
  /** A user, group, extension, DID or PSTN number of the domain (the element's text). */
  readonly target: Param<string>
  readonly callingNumber: Param<string> | undefined
  readonly failureAction: Param<FailureAction> | undefined
  /** 5-180 seconds, default 30. */
  readonly answerTimeout: Param<number>
}

export interface Park extends Base {
  readonly type: 'Park'
  /** 1-86400 seconds, default 21600. */
  readonly timeout: Param<number>
}

export interface Hangup extends Base {
  readonly type: 'Hangup'
  /** Absent: normal clearing. */
  readonly reason: Param<HangupReason> | undefined
}

export type IvrElement =
  | Answer
  | Play
  | Speak
  | Wait
  | GetDigits
  | SetVar
  | If
  | Switch
  | Cond
  | GoTo
  | SetErrorHandler
  | GetJSON
  | Redirect
  | Transfer
  | Park
  | Hangup

/** The spec calls them elements; `Element` reads naturally where no DOM type is in scope. */
export type Element = IvrElement

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
