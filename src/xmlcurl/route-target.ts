/**
 * Where a call goes, once resolved against the directory of its domain. Its own module because
 * both ends use it: leg.ts produces one from an originated leg's variables, routes.ts turns one
 * into dialplan actions (and routes.ts reads the leg), so the type sits below both.
 */
import type { Group, User } from '../directory/directory.js'

/** Where a call goes, resolved against the directory of its domain. */
export type RouteTarget =
  | { readonly kind: 'user'; readonly user: User }
  | { readonly kind: 'group'; readonly group: Group }
  | { readonly kind: 'extension'; readonly number: string; readonly xmlUrl: string }
  | { readonly kind: 'pstn'; readonly number: string }
  | { readonly kind: 'ivr'; readonly key: string }
