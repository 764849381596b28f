// Runs named SQL queries with real DuckDB and prints the results as JSON,
// for arrowio's TestDuckDB. Input (stdin): {"name": "SQL", ...}. Output:
// {"name": {"columns": [...], "rows": [[...], ...]} | {"error": "..."}}.
// BIGINT/HUGEINT values are printed as strings, so nothing loses precision.
import { DuckDBInstance } from '@duckdb/node-api';
import { readFileSync } from 'node:fs';

const queries = JSON.parse(readFileSync(0, 'utf8'));
const db = await DuckDBInstance.create(':memory:');
const con = await db.connect();
const out = {};
for (const [name, sql] of Object.entries(queries)) {
  try {
    const res = await con.runAndReadAll(sql);
    out[name] = { columns: res.columnNames(), rows: res.getRowsJS() };
  } catch (e) {
    out[name] = { error: String(e && e.message ? e.message : e) };
  }
}
process.stdout.write(JSON.stringify(out, (k, v) => (typeof v === 'bigint' ? v.toString() : v)));
