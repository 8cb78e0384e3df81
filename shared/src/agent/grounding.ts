/**
 * Grounding of an agent's answer: every number it states as a result must come from somewhere the
 * run actually read — a tool result, the notebook or data it was shown, or the request itself. A
 * model that proposes a cell, never sees it run, and still answers "the total is 12" states a
 * number no tool produced; `unsupportedClaims` finds it so the run can ask the model to verify or
 * restate, and mark what stays unverified. Pure.
 *
 * What counts as a claim: decimal numbers in the answer's prose and inline code (not in fenced
 * code blocks, which show code rather than results), outside identifiers (`c_12ab`, `x2`, `v1.2`),
 * dates and times, list markers, and references such as "cell 3" or "step 2". Small counts of
 * workspace things ("2 cells", "1 proposal") are not results and are skipped.
 *
 * What supports a claim: the same value in the evidence at the claim's precision (12 is supported
 * by 12, 12.0 or 11.96; 1.01 by 1.0089; 45 % by 0.45 or 45), with either sign.
 */

export interface NumericClaim {
  /** The number as written in the answer. */
  text: string;
  value: number;
  /** Half a unit of the last written digit: how far a supporting value may be. */
  tolerance: number;
  percent: boolean;
  /** Offset in the answer. */
  index: number;
}

const CLAIM = /([-−]?)(\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d+))?(?:[eE]([-+]?\d+))?(\s?%)?/gu;
const COUNT_NOUNS = /^\s?(cells?|steps?|proposals?|changes?|tools?|tool calls?|layers?|tables?|messages?|people|persons?|turns?|times?|minutes?|seconds?|hours?|days?|panels?|views?|questions?|options?|ways?)\b/i;
const REFERENCE_WORDS = /(?:\b(?:cells?|steps?|lines?|items?|index|version|turn|chapter|section|figure|fig\.|table|page|phase|round)|#)\s*$/i;

function maskFencedCode(text: string): string {
  return text.replace(/```[\s\S]*?(```|$)/g, (m) => ' '.repeat(m.length));
}

/** The numbers an answer states as results (see the module comment for what is skipped). */
export function numericClaims(answer: string): NumericClaim[] {
  const text = maskFencedCode(answer);
  const out: NumericClaim[] = [];
  for (const m of text.matchAll(CLAIM)) {
    const index = m.index!;
    const whole = m[0];
    const before = text.slice(Math.max(0, index - 24), index);
    const after = text.slice(index + whole.length);
    // Part of an identifier, a version, a path, a ratio or a date written with dashes.
    if (/[\p{L}\p{N}_.\\/:]/u.test(before.slice(-1))) continue;
    // Letters right after: 3D, 2nd, x86 — but a unit (12ms, 30Hz, 2x) keeps it a claim.
    if (/^[\p{L}_]/u.test(after) && !/^(?:ms|s|min|h|Hz|kHz|fps|px|µm|um|nm|mm|cm|m|kB|MB|GB|x)(?![\p{L}\p{N}_])/u.test(after)) continue;
    if (/^[:\-/.]\d/.test(after)) continue; // times, dates, version triples, ranges written 3-4
    if (/^\s*[.)]\s/.test(after) && /(^|\n)\s*$/.test(before)) continue; // list marker
    if (REFERENCE_WORDS.test(before)) continue;
    const intPart = m[2]!.replace(/,/g, '');
    const frac = m[3] ?? '';
    const exp = m[4] ? Number(m[4]) : 0;
    const value = Number(`${intPart}${frac ? `.${frac}` : ''}e${exp}`) * (m[1] ? -1 : 1);
    if (!Number.isFinite(value)) continue;
    const percent = Boolean(m[5]);
    if (!frac && !exp && !percent && Math.abs(value) <= 10 && COUNT_NOUNS.test(after)) continue;
    out.push({ text: whole.trim(), value, tolerance: 0.5 * 10 ** (exp - frac.length), percent, index });
  }
  return out;
}

const EVIDENCE_NUMBER = /(?<![\p{L}_])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/gu;

/** Every number in the evidence texts (JSON or prose), thousands separators read as in prose. */
export function evidenceNumbers(evidence: readonly string[]): number[] {
  const out: number[] = [];
  for (const e of evidence) {
    // Read both ways: "1,234" in prose is one number, [100,200] in JSON is two.
    const texts = /\d,\d{3}/.test(e) ? [e, e.replace(/(\d),(?=\d{3}(?!\d))/g, '$1')] : [e];
    for (const t of texts) {
      for (const m of t.matchAll(EVIDENCE_NUMBER)) {
        const v = Number(m[0]);
        if (Number.isFinite(v)) out.push(v);
      }
    }
  }
  return out;
}

function supported(claim: NumericClaim, values: readonly number[]): boolean {
  const wanted = claim.percent ? [claim.value, claim.value / 100] : [claim.value];
  return wanted.some((w, i) => {
    const tol = (i === 1 ? claim.tolerance / 100 : claim.tolerance) + Math.abs(w) * 1e-12;
    return values.some((v) => Math.abs(Math.abs(v) - Math.abs(w)) <= tol);
  });
}

/** The claims of `answer` that no number in `evidence` supports, in order, each once. */
export function unsupportedClaims(answer: string, evidence: readonly string[]): NumericClaim[] {
  const values = evidenceNumbers(evidence);
  const seen = new Set<string>();
  return numericClaims(answer).filter((c) => {
    if (supported(c, values) || seen.has(c.text)) return false;
    seen.add(c.text);
    return true;
  });
}
