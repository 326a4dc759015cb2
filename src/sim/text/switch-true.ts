/**
 * switch_true (switch_utils.h): how FreeSWITCH reads a yes/no variable such as
 * hangup_after_bridge, continue_on_fail or an `inline` attribute. Shared by the core, the
 * dialplan, originate and the applications, so it lives with the other string rules.
 */
export const isTrue = (v: string | undefined): boolean => v !== undefined && /^(true|yes|on|enabled|active|allow|1)$/i.test(v)
