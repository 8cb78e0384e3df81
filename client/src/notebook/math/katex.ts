/**
 * KaTeX rendering of math (`$…$`, `$$…$$` in markdown cells, `text/latex` outputs). KaTeX builds
 * markup from the TeX itself (no HTML passes through; `\href`, `\url` and `\htmlClass` are refused by
 * `trust: false`), errors render in red instead of throwing.
 */
import katex from 'katex';
import 'katex/dist/katex.min.css';

/** Renders `tex` into `el`. */
export function renderMath(el: HTMLElement, tex: string, display: boolean): void {
  katex.render(tex, el, { displayMode: display, throwOnError: false, trust: false, strict: 'ignore', output: 'htmlAndMathml' });
}

/** `text/latex` output data: `$$…$$` / `$…$` / `\[…\]` wrappers removed, display mode unless inline. */
export function latexOutput(data: string): { tex: string; display: boolean } {
  const s = data.trim();
  const m = /^\$\$([\s\S]*)\$\$$/.exec(s) ?? /^\\\[([\s\S]*)\\\]$/.exec(s);
  if (m) return { tex: m[1]!.trim(), display: true };
  const i = /^\$([\s\S]*)\$$/.exec(s);
  return i ? { tex: i[1]!.trim(), display: false } : { tex: s, display: true };
}
