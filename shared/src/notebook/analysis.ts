/**
 * Static analysis of notebook cells: what each cell defines and what it reads, found with a real
 * JavaScript parser (acorn) and a scope-aware walk, so that locals, parameters, shadowing,
 * destructuring, classes, closures and imports are told apart from the cell's real inputs.
 * SQL cells define their name and read `$name` parameters and the tables of other cells.
 * Pure module (no I/O); used by the kernel to build the dependency graph and by clients to show
 * what a cell defines.
 */
import { parse, type Node } from 'acorn';
import { SQL_NAME_PATTERN } from './sql-name.ts';

/** Where something is in a cell's source (1-based line, 0-based column, as acorn and editors do). */
export interface SourcePos {
  line: number;
  column: number;
}

/** A static import of a JavaScript cell (rewritten by the kernel into a curated-library load). */
export interface CellImport {
  /** Module name as written (`'d3-array'`). */
  source: string;
  /** Local name → imported name (`'*'` for a namespace import, `'default'` for the default). */
  bindings: Array<{ local: string; imported: string }>;
  /** Offsets of the whole declaration in the source. */
  start: number;
  end: number;
}

/** What a cell defines and reads. */
export interface CellAnalysis {
  /** Top-level names the cell defines (its outputs to other cells), in source order. */
  defs: string[];
  /** Free names the cell reads (its inputs), in order of first use. */
  refs: string[];
  /** SQL cells: the `$name` parameters (a subset of refs, bound as values, never interpolated). */
  params?: string[];
  /** JavaScript cells: static imports. */
  imports?: CellImport[];
  /** JavaScript cells: offsets of a final expression statement, whose value is the cell's display value. */
  lastExpression?: { start: number; end: number };
  /**
   * JavaScript cells: whether the code loops or calls anything (so it could run forever). Cells
   * that do neither finish at once; the kernel skips arming a per-run watchdog for them.
   */
  mayLoop?: boolean;
  /** The source does not parse: the message and where. */
  error?: { message: string } & Partial<SourcePos>;
}

type AnyNode = Node & Record<string, any>;

class Scope {
  readonly names = new Set<string>();
  constructor(readonly parent: Scope | null) {}
  has(name: string): boolean {
    for (let s: Scope | null = this; s; s = s.parent) if (s.names.has(name)) return true;
    return false;
  }
}

/** Names bound by a binding pattern (`{a, b: [c, ...d], e = 1}` binds a, c, d, e). */
export function patternNames(p: AnyNode | null | undefined, out: string[] = []): string[] {
  if (!p) return out;
  switch (p.type) {
    case 'Identifier':
      out.push(p.name);
      break;
    case 'ObjectPattern':
      for (const prop of p.properties) patternNames(prop.type === 'RestElement' ? prop.argument : prop.value, out);
      break;
    case 'ArrayPattern':
      for (const el of p.elements) patternNames(el, out);
      break;
    case 'AssignmentPattern':
      patternNames(p.left, out);
      break;
    case 'RestElement':
      patternNames(p.argument, out);
      break;
  }
  return out;
}

const FUNCTIONS = new Set(['FunctionDeclaration', 'FunctionExpression', 'ArrowFunctionExpression']);

/** `var` names declared anywhere in a function body (not inside nested functions): they are hoisted. */
function hoistedVars(node: AnyNode | null | undefined, out: Set<string>): void {
  if (!node || typeof node.type !== 'string' || FUNCTIONS.has(node.type) || node.type.startsWith('Class')) return;
  if (node.type === 'VariableDeclaration') {
    if (node.kind === 'var') for (const d of node.declarations) patternNames(d.id).forEach((n) => out.add(n));
    return;
  }
  for (const key of ['body', 'consequent', 'alternate', 'block', 'handler', 'finalizer', 'cases', 'init', 'left']) {
    const v = node[key];
    if (Array.isArray(v)) v.forEach((x) => hoistedVars(x, out));
    else if (v && typeof v === 'object') hoistedVars(v, out);
  }
}

/** Lexical names declared directly in a list of statements (let/const/class/function/import). */
function lexicalNames(statements: AnyNode[], out: Set<string>): void {
  for (const s0 of statements) {
    const s = s0.type === 'ExportNamedDeclaration' || s0.type === 'ExportDefaultDeclaration' ? s0.declaration ?? s0 : s0;
    if (s.type === 'VariableDeclaration' && s.kind !== 'var') for (const d of s.declarations) patternNames(d.id).forEach((n) => out.add(n));
    else if ((s.type === 'FunctionDeclaration' || s.type === 'ClassDeclaration') && s.id) out.add(s.id.name);
    else if (s.type === 'ImportDeclaration') for (const sp of s.specifiers) out.add(sp.local.name);
  }
}

/** Walks a program, collecting free identifiers (reads of names no enclosing scope binds). */
const LOOPING = new Set(['ForStatement', 'ForInStatement', 'ForOfStatement', 'WhileStatement', 'DoWhileStatement', 'CallExpression', 'NewExpression', 'TaggedTemplateExpression', 'ImportDeclaration', 'AwaitExpression']);

class RefCollector {
  readonly refs: string[] = [];
  mayLoop = false;
  private readonly seen = new Set<string>();

  private ref(name: string, scope: Scope): void {
    if (scope.has(name) || this.seen.has(name)) return;
    this.seen.add(name);
    this.refs.push(name);
  }

  /** Enters a block-like scope: declares its lexical names (and, for function bodies, vars). */
  private blockScope(statements: AnyNode[], parent: Scope, fnBody: AnyNode | null = null): Scope {
    const scope = new Scope(parent);
    lexicalNames(statements, scope.names);
    if (fnBody) hoistedVars(fnBody, scope.names);
    return scope;
  }

  program(node: AnyNode): Scope {
    const scope = this.blockScope(node.body, new Scope(null), node);
    for (const s of node.body) this.visit(s, scope);
    return scope;
  }

  /** Visits the expressions inside a binding pattern (defaults, computed keys), not its names. */
  private pattern(p: AnyNode | null | undefined, scope: Scope): void {
    if (!p) return;
    switch (p.type) {
      case 'ObjectPattern':
        for (const prop of p.properties) {
          if (prop.type === 'RestElement') this.pattern(prop.argument, scope);
          else {
            if (prop.computed) this.visit(prop.key, scope);
            this.pattern(prop.value, scope);
          }
        }
        break;
      case 'ArrayPattern':
        for (const el of p.elements) this.pattern(el, scope);
        break;
      case 'AssignmentPattern':
        this.pattern(p.left, scope);
        this.visit(p.right, scope);
        break;
      case 'RestElement':
        this.pattern(p.argument, scope);
        break;
      case 'MemberExpression': // only in assignment targets
        this.visit(p, scope);
        break;
    }
  }

  private fn(node: AnyNode, scope: Scope): void {
    const outer = new Scope(scope);
    if (node.type === 'FunctionExpression' && node.id) outer.names.add(node.id.name);
    if (node.type !== 'ArrowFunctionExpression') outer.names.add('arguments');
    for (const p of node.params) patternNames(p).forEach((n) => outer.names.add(n));
    for (const p of node.params) this.pattern(p, outer);
    if (node.body.type === 'BlockStatement') {
      const inner = this.blockScope(node.body.body, outer, node.body);
      for (const s of node.body.body) this.visit(s, inner);
    } else this.visit(node.body, outer);
  }

  private cls(node: AnyNode, scope: Scope): void {
    if (node.superClass) this.visit(node.superClass, scope);
    const inner = new Scope(scope);
    if (node.id) inner.names.add(node.id.name);
    for (const m of node.body.body) {
      if (m.type === 'StaticBlock') {
        const b = this.blockScope(m.body, inner, m);
        for (const s of m.body) this.visit(s, b);
        continue;
      }
      if (m.computed) this.visit(m.key, inner);
      if (m.value) this.visit(m.value, inner);
    }
  }

  visit(node: AnyNode | null | undefined, scope: Scope): void {
    if (!node || typeof node.type !== 'string') return;
    if (LOOPING.has(node.type)) this.mayLoop = true;
    switch (node.type) {
      case 'Identifier':
        this.ref(node.name, scope);
        return;
      case 'FunctionDeclaration':
      case 'FunctionExpression':
      case 'ArrowFunctionExpression':
        this.fn(node, scope);
        return;
      case 'ClassDeclaration':
      case 'ClassExpression':
        this.cls(node, scope);
        return;
      case 'VariableDeclaration':
        for (const d of node.declarations) {
          this.pattern(d.id, scope);
          this.visit(d.init, scope);
        }
        return;
      case 'BlockStatement':
      case 'StaticBlock': {
        const inner = this.blockScope(node.body, scope);
        for (const s of node.body) this.visit(s, inner);
        return;
      }
      case 'SwitchStatement': {
        this.visit(node.discriminant, scope);
        const inner = this.blockScope(node.cases.flatMap((c: AnyNode) => c.consequent), scope);
        for (const c of node.cases) {
          this.visit(c.test, inner);
          for (const s of c.consequent) this.visit(s, inner);
        }
        return;
      }
      case 'ForStatement':
      case 'ForInStatement':
      case 'ForOfStatement': {
        const head = node.type === 'ForStatement' ? node.init : node.left;
        const inner = new Scope(scope);
        if (head?.type === 'VariableDeclaration' && head.kind !== 'var') for (const d of head.declarations) patternNames(d.id).forEach((n) => inner.names.add(n));
        this.visit(head, inner); // a declaration, or an assignment target (whose names are reads)
        for (const k of ['test', 'update', 'right', 'body']) this.visit(node[k], inner);
        return;
      }
      case 'CatchClause': {
        const inner = new Scope(scope);
        patternNames(node.param).forEach((n) => inner.names.add(n));
        this.pattern(node.param, inner);
        this.visit(node.body, inner);
        return;
      }
      case 'MemberExpression':
        this.visit(node.object, scope);
        if (node.computed) this.visit(node.property, scope);
        return;
      case 'Property':
      case 'PropertyDefinition':
      case 'MethodDefinition':
        if (node.computed) this.visit(node.key, scope);
        this.visit(node.value, scope);
        return;
      case 'AssignmentExpression':
        if (node.left.type === 'Identifier') this.ref(node.left.name, scope);
        else this.pattern(node.left, scope);
        this.visit(node.right, scope);
        return;
      case 'LabeledStatement':
        this.visit(node.body, scope);
        return;
      case 'BreakStatement':
      case 'ContinueStatement':
      case 'MetaProperty':
      case 'ThisExpression':
      case 'Super':
      case 'ImportDeclaration':
        return;
      case 'ExportSpecifier':
        this.visit(node.local, scope);
        return;
    }
    for (const key of Object.keys(node)) {
      if (key === 'type' || key === 'start' || key === 'end' || key === 'loc') continue;
      const v = node[key];
      if (Array.isArray(v)) v.forEach((x) => x && typeof x === 'object' && this.visit(x, scope));
      else if (v && typeof v === 'object' && typeof v.type === 'string') this.visit(v, scope);
    }
  }
}

function topLevelDefs(program: AnyNode): string[] {
  const out: string[] = [];
  const add = (n: string) => !out.includes(n) && out.push(n);
  const hoisted = new Set<string>();
  hoistedVars(program, hoisted);
  for (const s0 of program.body) {
    const s = s0.type === 'ExportNamedDeclaration' || s0.type === 'ExportDefaultDeclaration' ? s0.declaration ?? s0 : s0;
    if (s.type === 'VariableDeclaration') for (const d of s.declarations) patternNames(d.id).forEach(add);
    else if ((s.type === 'FunctionDeclaration' || s.type === 'ClassDeclaration') && s.id) add(s.id.name);
    else if (s.type === 'ImportDeclaration') for (const sp of s.specifiers) add(sp.local.name);
  }
  hoisted.forEach(add); // vars declared inside top-level blocks and loops are top-level too
  return out;
}

/** Analyses a JavaScript cell (module syntax: top-level `await` and `import` are allowed). */
export function analyzeJs(source: string): CellAnalysis {
  let program: AnyNode;
  try {
    program = parse(source, { ecmaVersion: 'latest', sourceType: 'module', locations: true, allowHashBang: true }) as AnyNode;
  } catch (e) {
    const err = e as SyntaxError & { loc?: SourcePos };
    return { defs: [], refs: [], error: { message: err.message.replace(/ \(\d+:\d+\)$/, ''), line: err.loc?.line, column: err.loc?.column } };
  }
  const collector = new RefCollector();
  collector.program(program);
  const imports: CellImport[] = [];
  for (const s of program.body) {
    if (s.type !== 'ImportDeclaration') continue;
    imports.push({
      source: String(s.source.value),
      start: s.start,
      end: s.end,
      bindings: s.specifiers.map((sp: AnyNode) => ({
        local: sp.local.name,
        imported: sp.type === 'ImportNamespaceSpecifier' ? '*' : sp.type === 'ImportDefaultSpecifier' ? 'default' : (sp.imported.name ?? String(sp.imported.value)),
      })),
    });
  }
  const last = program.body[program.body.length - 1];
  const out: CellAnalysis = { defs: topLevelDefs(program), refs: collector.refs, imports, mayLoop: collector.mayLoop || imports.length > 0 };
  if (last?.type === 'ExpressionStatement' && !last.directive) out.lastExpression = { start: last.expression.start, end: last.expression.end };
  return out;
}

export { SQL_NAME_PATTERN };

/**
 * Tokenises SQL just enough to find identifiers and `$name` parameters outside string literals,
 * quoted identifiers are kept (their text) and comments are skipped.
 */
function sqlTokens(sql: string): { idents: string[]; params: string[] } {
  const idents: string[] = [];
  const params: string[] = [];
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === '-' && sql[i + 1] === '-') {
      while (i < sql.length && sql[i] !== '\n') i++;
    } else if (c === '/' && sql[i + 1] === '*') {
      const end = sql.indexOf('*/', i + 2);
      i = end < 0 ? sql.length : end + 2;
    } else if (c === "'") {
      i++;
      while (i < sql.length && !(sql[i] === "'" && sql[i + 1] !== "'")) i += sql[i] === "'" ? 2 : 1;
      i++;
    } else if (c === '"') {
      let j = i + 1;
      let name = '';
      while (j < sql.length && !(sql[j] === '"' && sql[j + 1] !== '"')) {
        name += sql[j];
        j += sql[j] === '"' ? 2 : 1;
      }
      idents.push(name);
      i = j + 1;
    } else if (c === '$' && /[A-Za-z_]/.test(sql[i + 1] ?? '')) {
      let j = i + 1;
      while (j < sql.length && /[A-Za-z0-9_]/.test(sql[j]!)) j++;
      params.push(sql.slice(i + 1, j));
      i = j;
    } else if (/[A-Za-z_]/.test(c)) {
      let j = i;
      while (j < sql.length && /[A-Za-z0-9_$]/.test(sql[j]!)) j++;
      idents.push(sql.slice(i, j));
      i = j;
    } else i++;
  }
  return { idents, params };
}

/**
 * Analyses an SQL cell. It defines its name (if valid) and reads its `$params` (JavaScript values,
 * bound, never interpolated) plus every identifier; the graph keeps only identifiers that another
 * cell defines, so an SQL cell can read another SQL cell's result as a table. The identifier list
 * is a superset (a column named like a cell also links them), which can only add ordering edges.
 */
export function analyzeSql(source: string, name?: string): CellAnalysis {
  const { idents, params } = sqlTokens(source);
  const refs: string[] = [];
  for (const n of [...params, ...idents]) if (!refs.includes(n) && n !== name) refs.push(n);
  const out: CellAnalysis = { defs: name && SQL_NAME_PATTERN.test(name) ? [name] : [], refs, params: [...new Set(params)] };
  if (name !== undefined && name !== '' && !SQL_NAME_PATTERN.test(name)) out.error = { message: `"${name}" is not a valid name (letters, digits and _; not starting with a digit)` };
  return out;
}

/** Analyses any cell by kind; markdown cells define and read nothing. */
export function analyzeCell(kind: 'code' | 'sql' | 'markdown', source: string, name?: string): CellAnalysis {
  if (kind === 'code') return analyzeJs(source);
  if (kind === 'sql') return analyzeSql(source, name);
  return { defs: [], refs: [] };
}
