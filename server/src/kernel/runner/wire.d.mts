/** Types of wire.mjs (frames between the kernel supervisor and its children). */
export declare function replacer(this: unknown, key: string, v: unknown): unknown;
export declare function reviver(key: string, v: unknown): unknown;
export declare function encodeFrame(msg: unknown): Buffer;
export declare function frameReader(onMessage: (msg: any) => void, onError: (e: Error) => void, maxFrame?: number): (chunk: Buffer) => void;
