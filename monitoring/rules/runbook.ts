/** Where each alert's runbook section lives. */

/** GitHub turns the heading `## HermesFooBar` into the anchor `#hermesfoobar`. */
export function runbookUrl(runbookBase: string, alertName: string): string {
  return `${runbookBase}#${alertName.toLowerCase()}`;
}
