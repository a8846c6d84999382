import { randomUUID } from 'node:crypto';
import { CompiledQuery, type Compilable, type Kysely } from 'kysely';
import type { Database } from './database.js';

/** The compiled SQL of a template and, per bound parameter, which argument fills it (-1: a constant). */
interface Compiled {
  sql: string;
  parameters: readonly unknown[];
  slots: number[];
}

/**
 * A Kysely query built and compiled once, then run with new argument values. Building and
 * compiling a Kysely query (immutable operation nodes, then a visitor pass) cost more than
 * running it on SQLite: a third of the CPU of a poll went there. The template is built once
 * with a unique placeholder per argument; each placeholder's position among the compiled
 * parameters is where that argument goes. Same SQL on every call, so the statement cache
 * (SQLite) and PostgreSQL see one text.
 */
export class QueryTemplate<A extends readonly unknown[], R> {
  private compiled: Compiled | undefined;

  /**
   * `onCompiled` hears the template's SQL text once, when it is first compiled (PostgreSQL:
   * PreparedStatements.add, so the text runs as a named prepared statement).
   */
  constructor(
    private readonly arity: number,
    private readonly build: (db: Kysely<Database>, ...args: A) => Compilable<R>,
    private readonly onCompiled: (sql: string) => void = () => undefined,
  ) {}

  /** Runs the query on `db` (the store's Kysely or a transaction) with these arguments. */
  async execute(db: Kysely<Database>, ...args: A): Promise<R[]> {
    const compiled = (this.compiled ??= this.compile(db));
    const parameters = compiled.parameters.map((value, i) => {
      const slot = compiled.slots[i] ?? -1;
      return slot === -1 ? value : args[slot];
    });
    const result = await db.executeQuery<R>(CompiledQuery.raw(compiled.sql, [...parameters]));
    return result.rows;
  }

  private compile(db: Kysely<Database>): Compiled {
    const placeholders = Array.from({ length: this.arity }, (_, i) => `\u0000argument ${i} ${randomUUID()}`);
    const query = this.build(db, ...(placeholders as unknown as A)).compile();
    const slots = query.parameters.map((value) => (typeof value === 'string' ? placeholders.indexOf(value) : -1));
    // An argument Kysely inlined instead of binding would be silently ignored: refuse at once.
    for (let i = 0; i < this.arity; i += 1) {
      if (!slots.includes(i)) throw new Error(`argument ${i} is not a bound parameter of: ${query.sql}`);
    }
    this.onCompiled(query.sql);
    return { sql: query.sql, parameters: query.parameters, slots };
  }
}
