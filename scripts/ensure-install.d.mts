/** Types of ensure-install.mjs (a plain script: Node built-ins only, it runs before the install). */
export declare const MIN_NODE: [number, number];
export declare const NODE_22_DECLARED: string[];
export declare function checkNode(): number;
export declare function ensureInstalled(root: string): void;
