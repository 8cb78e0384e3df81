/** Whether this browser can draw WebGL maps (checked before loading the renderer). Effects: a throwaway canvas. */

/** Whether this browser can draw the map; the reason when not. */
export function webglProblem(): string | null {
  try {
    const c = document.createElement('canvas');
    const gl = c.getContext('webgl') as WebGLRenderingContext | null;
    if (!gl) return 'WebGL is not available in this browser (or it is turned off), so the map cannot be drawn. Turn on hardware acceleration, or open the workspace in another browser.';
    const missing = ['OES_texture_float', 'OES_element_index_uint', 'ANGLE_instanced_arrays'].filter((e) => !gl.getExtension(e));
    gl.getExtension('WEBGL_lose_context')?.loseContext();
    if (missing.length) return `This browser's WebGL lacks ${missing.join(', ')}, which the map needs.`;
    return null;
  } catch (e) {
    return `WebGL could not start: ${(e as Error).message}`;
  }
}
