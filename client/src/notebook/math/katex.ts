/**
 * KaTeX rendering of math (`$…$`, `$$…$$` in markdown cells, `text/latex` outputs). KaTeX builds
 * markup from the TeX itself (no HTML passes through; `\href`, `\url` and `\htmlClass` are refused by
 * `trust: false`), errors render in red instead of throwing.
 *
 * KaTeX (about 240 KB, and its fonts' CSS) is loaded the first time math is shown, not with the
 * first bundle every workspace opens with (speed issue, gap 3): until then the element shows the TeX
 * source, marked `math-pending`, and is rendered in place when KaTeX is there.
 */
import type katexType from 'katex';

type Katex = typeof katexType;
let katex: Katex | null = null;
let loading: Promise<Katex> | null = null;

/** KaTeX, loaded once (with its CSS). */
export function loadKatex(): Promise<Katex> {
  loading ??= Promise.all([import('katex'), import('katex/dist/katex.min.css')]).then(([m]) => (katex = m.default));
  return loading;
}

const draw = (k: Katex, el: HTMLElement, tex: string, display: boolean) =>
  k.render(tex, el, { displayMode: display, throwOnError: false, trust: false, strict: 'ignore', output: 'htmlAndMathml' });

/** Renders `tex` into `el`: at once when KaTeX is loaded, else as soon as it is (the TeX shows meanwhile). */
export function renderMath(el: HTMLElement, tex: string, display: boolean): void {
  if (katex) return draw(katex, el, tex, display);
  el.textContent = tex;
  el.classList.add('math-pending');
  loadKatex().then(
    (k) => {
      el.classList.remove('math-pending');
      el.textContent = '';
      draw(k, el, tex, display);
    },
    (e: unknown) => {
      loading = null; // a later math element tries again
      el.classList.remove('math-pending');
      el.title = `This math could not be rendered: ${(e as Error)?.message ?? e}`;
    },
  );
}

/** `text/latex` output data: `$$…$$` / `$…$` / `\[…\]` wrappers removed, display mode unless inline. */
export function latexOutput(data: string): { tex: string; display: boolean } {
  const s = data.trim();
  const m = /^\$\$([\s\S]*)\$\$$/.exec(s) ?? /^\\\[([\s\S]*)\\\]$/.exec(s);
  if (m) return { tex: m[1]!.trim(), display: true };
  const i = /^\$([\s\S]*)\$$/.exec(s);
  return i ? { tex: i[1]!.trim(), display: false } : { tex: s, display: true };
}
