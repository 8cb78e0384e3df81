/**
 * What the kernel runs cells with: a JavaScript engine and an SQL engine per workspace. The real
 * ones are sandboxed child processes (js-runtime.ts, sql-runtime.ts); the kernel only needs these
 * operations, so a test of its scheduling can give it engines whose every run it finishes itself
 * (testkit `ScriptedEngines`) and drive it with no process and no timing.
 * Pure module (the default factory starts the real runtimes).
 */
import { JsRuntime, type JsRuntimeOptions } from './js-runtime.ts';
import { SqlRuntime, type SqlRuntimeOptions } from './sql-runtime.ts';

export type JsEngine = Pick<JsRuntime, 'layers' | 'start' | 'run' | 'cancel' | 'interrupt' | 'get' | 'set' | 'delete' | 'dispose'> & Partial<Pick<JsRuntime, 'runAhead' | 'expecting' | 'onAheadDropped'>>;
export type SqlEngine = Pick<SqlRuntime, 'query' | 'interrupt' | 'drop' | 'dispose'> & Partial<Pick<SqlRuntime, 'queryAhead' | 'expecting' | 'onAheadDropped'>>;

export interface KernelEngines {
  js(opts: JsRuntimeOptions): JsEngine;
  sql(opts: SqlRuntimeOptions): SqlEngine;
}

/** The sandboxed runtimes. */
export const sandboxedEngines: KernelEngines = {
  js: (opts) => new JsRuntime(opts),
  sql: (opts) => new SqlRuntime(opts),
};
