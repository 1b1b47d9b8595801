import type pg from 'pg'

/** The migration bookkeeping tables: what a migrator records, not the schema it made. */
const BOOKKEEPING = ['mikro_orm_migrations', 'mikro_orm_migrations_id_seq', 'runtime_schema_migration']

/**
 * The public schema of a database as sorted lines of text, one per relation, column, index,
 * constraint, trigger and function, each as Postgres itself prints it (`pg_indexes.indexdef`,
 * `pg_get_constraintdef`, `pg_get_triggerdef`, `pg_get_functiondef`), so two databases that
 * reached the same schema by different migrations compare equal, whatever the order they were
 * made in. The migrators' own bookkeeping tables are left out.
 *
 * @example
 * expect(await catalogOf(pool)).toEqual(snapshot)
 */
export async function catalogOf(db: Pick<pg.Pool, 'query'>): Promise<string[]> {
  const skip = BOOKKEEPING
  const q = async (sql: string) => (await db.query<{ line: string }>(sql, [skip])).rows.map((r) => r.line)
  const lines = [
    ...(await q(`select 'relation ' || c.relname || ' kind=' || c.relkind::text || ' persistence=' || c.relpersistence::text as line
                   from pg_class c join pg_namespace n on n.oid = c.relnamespace
                  where n.nspname = 'public' and c.relkind in ('r', 'p', 'S', 'v', 'm') and not c.relname = any($1)`)),
    ...(await q(`select 'column ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
                        || case when a.attnotnull then ' not null' else '' end
                        || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
                        || case a.attgenerated::text when 's' then ' generated stored' else '' end
                        || case when a.attidentity::text <> '' then ' identity ' || a.attidentity::text else '' end as line
                   from pg_attribute a join pg_class c on c.oid = a.attrelid join pg_namespace n on n.oid = c.relnamespace
                   left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
                  where n.nspname = 'public' and c.relkind in ('r', 'p') and a.attnum > 0 and not a.attisdropped and not c.relname = any($1)`)),
    ...(await q(`select 'index ' || indexname || ': ' || indexdef as line from pg_indexes where schemaname = 'public' and not tablename = any($1)`)),
    ...(await q(`select 'constraint ' || c.relname || '.' || k.conname || ': ' || pg_get_constraintdef(k.oid) as line
                   from pg_constraint k join pg_class c on c.oid = k.conrelid join pg_namespace n on n.oid = c.relnamespace
                  where n.nspname = 'public' and not c.relname = any($1)`)),
    ...(await q(`select 'trigger ' || t.tgname || ': ' || pg_get_triggerdef(t.oid) as line
                   from pg_trigger t join pg_class c on c.oid = t.tgrelid join pg_namespace n on n.oid = c.relnamespace
                  where n.nspname = 'public' and not t.tgisinternal and not c.relname = any($1)`)),
    ...(await q(`select 'function ' || p.proname || ': ' || pg_get_functiondef(p.oid) as line
                   from pg_proc p join pg_namespace n on n.oid = p.pronamespace
                  where n.nspname = 'public' and p.prokind = 'f' and $1::text[] is not null
                    and not exists (select 1 from pg_depend e where e.objid = p.oid and e.deptype = 'e')`)),
  ]
  return lines.sort()
}
