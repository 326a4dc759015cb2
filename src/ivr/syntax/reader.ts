/**
 * What an element module reads itself with: the node of an element being read, the way a
 * document is refused (an error with line, column and path), and `ParseContext`, everything the
 * document parser offers a module's `parse` (attribute and text values, its children, nested
 * statements, Section names to check once the whole document is read).
 *
 * Refusals are thrown inside the parser only (`fail`): a document is refused at its first
 * problem, and unwinding the recursive descent at once keeps every reading step free of error
 * plumbing. parseIvrDocument catches them and returns an error value.
 */
import type { IvrDocumentError, IvrElement, Param, ParsedExpr, SourcePos, ValueCheck } from './types.js'
import type { XmlElement } from './xml.js'

/** An element being read: its XML node, position, attributes (names already checked) and nesting depth. */
export interface ElementNode {
  readonly el: XmlElement
  readonly pos: SourcePos
  readonly attrs: ReadonlyMap<string, string>
  /** The root counts as 1. */
  readonly depth: number
}

/** A child element not read yet, with its path. */
export interface ChildElement {
  readonly el: XmlElement
  readonly path: string
}

/** Thrown inside the parser only; parseIvrDocument turns it into an error value. */
export class DocumentError {
  constructor(readonly error: IvrDocumentError) {}
}

/** Refuses the document: the reason, with the position when there is one. */
export function fail(pos: SourcePos | undefined, reason: string): never {
  if (pos === undefined) throw new DocumentError({ reason })
  throw new DocumentError({
    reason: `line ${pos.line}, column ${pos.column} (${pos.path}): ${reason}`,
    line: pos.line,
    column: pos.column,
    path: pos.path,
  })
}

export const isBlank = (s: string): boolean => s.trim() === ''

export const positionOf = (child: ChildElement): SourcePos => ({ line: child.el.line, column: child.el.column, path: child.path })

/** Attribute and text values of the element being read (values.ts). */
export interface ValueReading {
  /** A value that may hold `{{ }}`: a template for run time, else checked now. `label` starts the message. */
  value<T>(node: ElementNode, label: string, raw: string, check: ValueCheck<T>): Param<T>
  /** An optional attribute with its default. */
  attr<T>(node: ElementNode, name: string, check: ValueCheck<T>, dflt: T): Param<T>
  optionalAttr<T>(node: ElementNode, name: string, check: ValueCheck<T>): Param<T> | undefined
  requiredAttr<T>(node: ElementNode, name: string, check: ValueCheck<T>): Param<T>
  /** An attribute that must be known at validation time (names): no templates. */
  literalAttr<T>(node: ElementNode, name: string, check: ValueCheck<T>, label: string): T
  /** The text content of an element that takes text; child elements are errors. */
  text(node: ElementNode): string
  /** The element's text, required (`what` says what it should be), as a value. */
  textValue<T>(node: ElementNode, what: string, check: ValueCheck<T>): Param<T>
  /** Leaf elements without text: nothing but blanks inside. */
  empty(node: ElementNode): void
  /** The `var` attribute of Set and GetJSON: a variable the document may set. */
  varName(node: ElementNode): string
  /** The `expr` attribute, parsed. */
  expr(node: ElementNode): ParsedExpr
}

/** What the document parser offers an element module while it reads itself. */
export interface ParseContext extends ValueReading {
  /** The element children of a container, with their paths; text between them must be blank. `where` names the container in messages. */
  children(node: ElementNode, where: string): ChildElement[]
  /**
   * Counts a child of `parent`, checks its depth, and its attribute names against `allowed`
   * (default: the element's own list).
   */
  enter(parent: ElementNode, child: ChildElement, allowed?: readonly string[]): ElementNode
  /** Refuses a child whose name is no element of the language (with a hint when only the case differs). */
  refuseUnknown(child: ChildElement): void
  /** The statements inside a Section or a branch (Then, Else, Case, Default, Clause). */
  body(node: ElementNode): IvrElement[]
  /**
   * The branch children of a container (If: Then, Else): only the `allowed` names, each
   * entered, in document order. Statements and misplaced names are refused.
   */
  branches(node: ElementNode, allowed: readonly string[]): ElementNode[]
  /** A Section name written literally: checked to exist once the whole document is read. `what` starts the message. */
  sectionRef(name: string, pos: SourcePos, what: string): void
}
