/** Copying text to the clipboard. Effects: clipboard. */

/** Copies `text`; false when the browser refuses (insecure origin, no permission). */
export async function copyText(text: string): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    return false;
  }
}
