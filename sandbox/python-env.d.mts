/** Types for sandbox/python-env.mjs (plain JavaScript so it runs before node_modules exists). */
export declare const projectRoot: string;
export declare const venvDir: string;
export declare function venvBin(name: string): string;
export declare function ensurePythonEnv(options?: { log?: NodeJS.WritableStream }): Promise<void>;
