import { CompiledQuery, type Kysely } from 'kysely';
import type { Database } from '../../src/storage/schema.js';

type PlanNode = Record<string, unknown>;

/** The rows a plan node and its children read from `relation` (PostgreSQL's EXPLAIN ANALYZE, JSON). */
function rowsRead(node: PlanNode, relation: string): number {
  const own = node['Relation Name'] === relation ? Number(node['Actual Rows']) * Number(node['Actual Loops']) : 0;
  const children = (node['Plans'] as PlanNode[] | undefined) ?? [];
  return own + children.reduce((sum, child) => sum + rowsRead(child, relation), 0);
}

/**
 * Runs `query` under PostgreSQL's EXPLAIN ANALYZE and returns how many rows its plan read from
 * `relation`, with the plan (for the assertion's message).
 */
export async function rowsReadOnPostgres(
  db: Kysely<Database>,
  query: CompiledQuery,
  relation: string,
): Promise<{ rows: number; plan: string }> {
  const result = await db.executeQuery<{ 'QUERY PLAN': [{ Plan: PlanNode }] }>(
    CompiledQuery.raw(`explain (analyze, format json) ${query.sql}`, [...query.parameters]),
  );
  const root = result.rows[0]?.['QUERY PLAN'][0].Plan as PlanNode;
  return { rows: rowsRead(root, relation), plan: JSON.stringify(root) };
}

/** SQLite's EXPLAIN QUERY PLAN of `query`, one line per step. */
export async function sqlitePlan(db: Kysely<Database>, query: CompiledQuery): Promise<string> {
  const plan = await db.executeQuery<{ detail: string }>(CompiledQuery.raw(`explain query plan ${query.sql}`, [...query.parameters]));
  return plan.rows.map((r) => r.detail).join('\n');
}
