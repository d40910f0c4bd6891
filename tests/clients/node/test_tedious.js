'use strict';
// Real-client tests through tedious (the Node.js TDS driver) against `mesquite serve`.
//
// The server address comes from MESQUITE_HOST / MESQUITE_PORT, the sa password from
// MESQUITE_SA_PASSWORD and the server's certificate (PEM) from MESQUITE_SERVER_CERT
// (tests/clients/run.sh starts a server and sets them). Each test is named
// "<feature>: ..." and records its outcome for tests/clients/table.py in
// MESQUITE_CLIENT_RESULTS as `tedious<TAB><feature><TAB>pass|FAIL`.

const assert = require('node:assert/strict');
const fs = require('node:fs');
const { test } = require('node:test');
const { Connection, Request, TYPES, ISOLATION_LEVEL } = require('tedious');

const HOST = process.env.MESQUITE_HOST || '127.0.0.1';
const PORT = Number(process.env.MESQUITE_PORT || 1433);
const PASSWORD = process.env.MESQUITE_SA_PASSWORD || '';
const CERT = process.env.MESQUITE_SERVER_CERT;
const RESULTS = process.env.MESQUITE_CLIENT_RESULTS;

function record(feature, result) {
  if (RESULTS) fs.appendFileSync(RESULTS, `tedious\t${feature}\t${result}\n`);
}

// A test that counts toward `feature` in the client-by-feature table.
function featureTest(feature, title, fn) {
  test(`${feature}: ${title}`, async (t) => {
    try {
      await fn(t);
    } catch (e) {
      record(feature, 'FAIL');
      throw e;
    }
    record(feature, 'pass');
  });
}

function connect(options = {}) {
  const conn = new Connection({
    server: HOST,
    authentication: { type: 'default', options: { userName: 'sa', password: PASSWORD } },
    options: {
      port: PORT,
      database: 'master',
      encrypt: false,
      trustServerCertificate: false,
      connectTimeout: 15000,
      requestTimeout: 30000,
      ...options,
    },
  });
  // Info and error messages, including those of the SET batch tedious sends at login.
  conn.infos = [];
  conn.errors = [];
  conn.on('infoMessage', (m) => conn.infos.push(m));
  conn.on('errorMessage', (m) => conn.errors.push(m));
  return new Promise((resolve, reject) => {
    conn.connect((err) => (err ? reject(err) : resolve(conn)));
  });
}

// Compares long strings without printing them whole on a mismatch.
function assertText(actual, expected) {
  assert.equal(typeof actual, 'string');
  if (actual !== expected) {
    let i = 0;
    while (i < actual.length && actual[i] === expected[i]) i++;
    assert.fail(`strings differ: length ${actual.length} vs ${expected.length}, first difference at ${i}`);
  }
}

function close(conn) {
  return new Promise((resolve) => {
    if (conn.closed) return resolve();
    conn.on('end', resolve);
    conn.close();
  });
}

// Runs `request` (built by `make(callback)`) with conn[method] and collects its rows,
// returned values and done tokens. Resolves with the outcome; rejects with the error.
function run(conn, method, make) {
  return new Promise((resolve, reject) => {
    const out = { rows: [], columns: null, returned: {}, returnStatus: undefined, dones: [] };
    const req = make((err, rowCount) => {
      if (err) {
        err.outcome = out;
        reject(err);
      } else {
        out.rowCount = rowCount;
        resolve(out);
      }
    });
    req.on('columnMetadata', (cols) => {
      out.columns = cols;
    });
    req.on('row', (cols) => out.rows.push(cols.map((c) => c.value)));
    req.on('returnValue', (name, value, meta) => {
      out.returned[name] = { value, meta };
    });
    req.on('done', (rowCount, more) => out.dones.push({ kind: 'done', rowCount, more }));
    req.on('doneInProc', (rowCount, more) => out.dones.push({ kind: 'doneInProc', rowCount, more }));
    req.on('doneProc', (rowCount, more, status) => {
      out.dones.push({ kind: 'doneProc', rowCount, more, status });
      if (status !== undefined) out.returnStatus = status;
    });
    conn[method](req);
  });
}

// SQL batch (SQLBatch packet).
function batch(conn, sql) {
  return run(conn, 'execSqlBatch', (cb) => new Request(sql, cb));
}

// sp_executesql (RPC) with parameters: [[name, type, value, options], ...].
function execSql(conn, sql, params = []) {
  return run(conn, 'execSql', (cb) => {
    const req = new Request(sql, cb);
    for (const [name, type, value, opts] of params) req.addParameter(name, type, value, opts);
    return req;
  });
}

function tx(conn, method, ...args) {
  return new Promise((resolve, reject) => {
    conn[method]((err) => (err ? reject(err) : resolve()), ...args);
  });
}

featureTest('plain', 'connects without TLS and runs a batch', async () => {
  const conn = await connect({ encrypt: false });
  try {
    const r = await batch(conn, "SELECT 1 AS one, N'héllo' AS s");
    assert.deepEqual(r.rows, [[1, 'héllo']]);
    assert.deepEqual(r.columns.map((c) => c.colName), ['one', 's']);
    // PRINT arrives as an info message.
    await batch(conn, "PRINT 'from mesquite'");
    assert.ok(conn.infos.some((m) => m.message === 'from mesquite' && m.number === 0));
    assert.deepEqual(conn.errors, []);
  } finally {
    await close(conn);
  }
});

featureTest('plain', "tedious's connection-time SET batch is accepted and takes effect", async () => {
  // tedious sends this batch right after LOGIN7 and reports a refused statement only as
  // an 'errorMessage' event (connect() still succeeds), so the events are checked.
  // With every option tedious can send: cursor_close_on_commit is only sent when set.
  const conn = await connect({
    encrypt: false,
    datefirst: 1,
    abortTransactionOnError: true,
    enableCursorCloseOnCommit: false,
  });
  try {
    const initialSql = conn.getInitialSql();
    for (const stmt of [
      'set ansi_nulls on',
      'set ansi_null_dflt_on on',
      'set ansi_padding on',
      'set ansi_warnings on',
      'set arithabort on',
      'set concat_null_yields_null on',
      'set cursor_close_on_commit off',
      'set datefirst 1',
      'set dateformat mdy',
      'set implicit_transactions off',
      'set language us_english',
      'set numeric_roundabort off',
      'set quoted_identifier on',
      'set textsize 2147483647',
      'set transaction isolation level read committed',
      'set xact_abort on',
    ]) {
      assert.ok(initialSql.split('\n').includes(stmt), `initial SQL has "${stmt}"`);
    }
    assert.deepEqual(conn.errors, []);
    // Run again as a batch of its own: no statement is refused.
    await batch(conn, initialSql);
    assert.deepEqual(conn.errors, []);
    // The options that take effect did: DATEFIRST, XACT_ABORT (an error rolls back the
    // transaction and ends the batch).
    const df = await batch(conn, 'SELECT @@DATEFIRST, @@LANGUAGE');
    assert.deepEqual(df.rows, [[1, 'us_english']]);
    await batch(conn, 'CREATE TABLE #x (a int)');
    const err = await batch(conn, "BEGIN TRAN; INSERT INTO #x VALUES (1); SELECT CAST('x' AS int); SELECT 'not reached'").then(
      () => assert.fail('no error'),
      (e) => e,
    );
    assert.equal(err.number, 245);
    assert.deepEqual(err.outcome.rows, []);
    const after = await batch(conn, 'SELECT @@TRANCOUNT, COUNT(*) FROM #x');
    assert.deepEqual(after.rows, [[0, 0]]);
  } finally {
    await close(conn);
  }
});

featureTest('tls', 'connects with encrypt: true, trustServerCertificate: true', async () => {
  const conn = await connect({ encrypt: true, trustServerCertificate: true });
  try {
    // A response of many packets through TLS.
    const r = await batch(conn, "SELECT REPLICATE(CAST('t' AS varchar(max)), 20000) AS big, 42 AS answer");
    assertText(r.rows[0][0], 't'.repeat(20000));
    assert.equal(r.rows[0][1], 42);
    assert.deepEqual(conn.errors, []);
  } finally {
    await close(conn);
  }
});

featureTest('tls', "connects with encrypt: true, verifying the server's certificate", async () => {
  assert.ok(CERT, 'MESQUITE_SERVER_CERT is set');
  const conn = await connect({
    encrypt: true,
    trustServerCertificate: false,
    serverName: 'localhost',
    cryptoCredentialsDetails: { ca: fs.readFileSync(CERT) },
  });
  try {
    const r = await batch(conn, 'SELECT 7');
    assert.deepEqual(r.rows, [[7]]);
  } finally {
    await close(conn);
  }
});

featureTest('strict', "connects with encrypt: 'strict' (TDS 8.0, TLS first)", async () => {
  assert.ok(CERT, 'MESQUITE_SERVER_CERT is set');
  const conn = await connect({
    encrypt: 'strict',
    serverName: 'localhost',
    cryptoCredentialsDetails: { ca: fs.readFileSync(CERT) },
  });
  try {
    const r = await execSql(conn, 'SELECT @x * 2', [['x', TYPES.Int, 21]]);
    assert.deepEqual(r.rows, [[42]]);
  } finally {
    await close(conn);
  }
});

featureTest('ddl', 'creates, alters and drops a table', async () => {
  const conn = await connect();
  try {
    await batch(conn, "IF OBJECT_ID('dbo.tedious_ddl') IS NOT NULL DROP TABLE dbo.tedious_ddl");
    await batch(conn, 'CREATE TABLE dbo.tedious_ddl (id int IDENTITY PRIMARY KEY, name nvarchar(50) NOT NULL)');
    await batch(conn, 'ALTER TABLE dbo.tedious_ddl ADD amount decimal(10, 2) NULL');
    await batch(conn, 'CREATE INDEX ix_name ON dbo.tedious_ddl (name)');
    const cols = await batch(
      conn,
      "SELECT name FROM sys.columns WHERE object_id = OBJECT_ID('dbo.tedious_ddl') ORDER BY column_id",
    );
    assert.deepEqual(cols.rows, [['id'], ['name'], ['amount']]);
    await batch(conn, 'DROP TABLE dbo.tedious_ddl');
    const gone = await batch(conn, "SELECT OBJECT_ID('dbo.tedious_ddl')");
    assert.deepEqual(gone.rows, [[null]]);
  } finally {
    await close(conn);
  }
});

featureTest('dml', 'inserts, updates, deletes with row counts', async () => {
  const conn = await connect();
  try {
    await batch(conn, 'CREATE TABLE #d (id int PRIMARY KEY, name varchar(20), amount decimal(10, 2))');
    const ins = await batch(conn, "INSERT INTO #d VALUES (1, 'alpha', 12.50), (2, 'beta', 1), (3, 'gamma', NULL)");
    assert.equal(ins.rowCount, 3);
    const upd = await batch(conn, 'UPDATE #d SET amount = amount + 1 WHERE amount IS NOT NULL');
    assert.equal(upd.rowCount, 2);
    const del = await batch(conn, "DELETE FROM #d WHERE name = 'gamma'");
    assert.equal(del.rowCount, 1);
    const sel = await batch(conn, 'SELECT id, name, amount FROM #d ORDER BY id');
    assert.deepEqual(sel.rows, [
      [1, 'alpha', 13.5],
      [2, 'beta', 2],
    ]);
    assert.equal(sel.rowCount, 2);
    // Two statements in one batch: one done token each.
    const two = await batch(conn, "INSERT INTO #d VALUES (4, 'delta', 4); SELECT COUNT(*) FROM #d");
    assert.deepEqual(two.rows, [[3]]);
    assert.deepEqual(
      two.dones.map((d) => [d.rowCount, d.more]),
      [
        [1, true],
        [1, false],
      ],
    );
  } finally {
    await close(conn);
  }
});

featureTest('params', 'parameterized queries through sp_executesql (addParameter)', async () => {
  const conn = await connect();
  try {
    await batch(conn, 'CREATE TABLE #p (id int PRIMARY KEY, name nvarchar(50), amount decimal(10, 2), at datetime2(3))');
    const at = new Date(Date.UTC(2024, 1, 29, 13, 14, 15, 123));
    const ins = await execSql(conn, 'INSERT INTO #p VALUES (@id, @name, @amount, @at)', [
      ['id', TYPES.Int, 1],
      ['name', TYPES.NVarChar, 'ünï'],
      ['amount', TYPES.Decimal, 12.5, { precision: 10, scale: 2 }],
      ['at', TYPES.DateTime2, at, { scale: 3 }],
    ]);
    assert.equal(ins.rowCount, 1);
    await execSql(conn, 'INSERT INTO #p VALUES (@id, @name, @amount, @at)', [
      ['id', TYPES.Int, 2],
      ['name', TYPES.NVarChar, null],
      ['amount', TYPES.Decimal, null, { precision: 10, scale: 2 }],
      ['at', TYPES.DateTime2, null, { scale: 3 }],
    ]);
    const sel = await execSql(conn, 'SELECT id, name, amount, at FROM #p WHERE id = @id', [['id', TYPES.Int, 1]]);
    assert.deepEqual(sel.rows, [[1, 'ünï', 12.5, at]]);
    const nul = await execSql(conn, 'SELECT COUNT(*) FROM #p WHERE name IS NULL AND amount IS NULL AND id = @id', [
      ['id', TYPES.Int, 2],
    ]);
    assert.deepEqual(nul.rows, [[1]]);

    // Round trip of many parameter types.
    const guid = '6F9619FF-8B86-D011-B42D-00C04FC964FF';
    const rt = await execSql(
      conn,
      'SELECT @bit, @tiny, @small, @big, @float, @money, @vc, @bin, @guid, @date, @dto, @long',
      [
        ['bit', TYPES.Bit, true],
        ['tiny', TYPES.TinyInt, 200],
        ['small', TYPES.SmallInt, -3],
        ['big', TYPES.BigInt, '5000000000'],
        ['float', TYPES.Float, 2.5],
        ['money', TYPES.Money, 12.5],
        ['vc', TYPES.VarChar, 'abc'],
        ['bin', TYPES.VarBinary, Buffer.from([1, 2, 255])],
        ['guid', TYPES.UniqueIdentifier, guid],
        ['date', TYPES.Date, new Date(Date.UTC(2024, 1, 29))],
        ['dto', TYPES.DateTimeOffset, at, { scale: 3 }],
        ['long', TYPES.NVarChar, 'λ'.repeat(5000)],
      ],
    );
    assertText(rt.rows[0].pop(), 'λ'.repeat(5000));
    assert.deepEqual(rt.rows, [
      [
        true,
        200,
        -3,
        '5000000000',
        2.5,
        12.5,
        'abc',
        Buffer.from([1, 2, 255]),
        guid,
        new Date(Date.UTC(2024, 1, 29)),
        at,
      ],
    ]);

    // A prepared statement (sp_prepare / sp_execute) run twice, then sp_unprepare.
    let current = () => {};
    const prep = new Request('SELECT @a + 1', (err) => current(err));
    prep.addParameter('a', TYPES.Int);
    const prepRows = [];
    prep.on('row', (cols) => prepRows.push(cols.map((c) => c.value)));
    await new Promise((resolve, reject) => {
      prep.once('prepared', resolve);
      prep.once('error', reject);
      conn.prepare(prep);
    });
    assert.equal(typeof prep.handle, 'number');
    for (const a of [1, 41]) {
      prepRows.length = 0;
      await new Promise((resolve, reject) => {
        current = (err) => (err ? reject(err) : resolve());
        conn.execute(prep, { a });
      });
      assert.deepEqual(prepRows, [[a + 1]]);
    }
    await new Promise((resolve, reject) => {
      current = (err) => (err ? reject(err) : resolve());
      conn.unprepare(prep);
    });
  } finally {
    await close(conn);
  }
});

featureTest('params', "unpaired UTF-16 surrogates in a parameter and in the SQL text come back as sent", async () => {
  const conn = await connect();
  try {
    await batch(conn, 'CREATE TABLE #s (id int, v nvarchar(10))');
    // JavaScript strings are UTF-16: tedious sends these units as they are.
    const lone = 'a\uD800b\uDFFF';
    await execSql(conn, 'INSERT #s VALUES (1, @v)', [['v', TYPES.NVarChar, lone]]);
    await batch(conn, "INSERT #s VALUES (2, N'x\uDC00')");
    const r = await batch(
      conn,
      'SELECT v, LEN(v), DATALENGTH(v), UNICODE(SUBSTRING(v, 2, 1)), CAST(v AS varbinary(20)) FROM #s ORDER BY id',
    );
    assert.equal(r.rows.length, 2);
    assert.deepEqual(r.rows[0].slice(0, 4), [lone, 4, 8, 0xd800]);
    assert.deepEqual([...r.rows[0][4]], [0x61, 0, 0x00, 0xd8, 0x62, 0, 0xff, 0xdf]);
    assert.deepEqual(r.rows[1].slice(0, 4), ['x\uDC00', 2, 4, 0xdc00]);
    // NCHAR of a surrogate; halves that meet make the pair; a cut pair keeps its half.
    const n = await batch(
      conn,
      "SELECT NCHAR(55296), CASE WHEN N'\uD800' = NCHAR(55296) THEN 1 ELSE 0 END, NCHAR(55357) + NCHAR(56832), CAST(N'\uD83D\uDE00' AS nvarchar(1))",
    );
    assert.deepEqual(n.rows, [['\uD800', 1, '\uD83D\uDE00', '\uD83D']]);
  } finally {
    await close(conn);
  }
});

featureTest('proc_output', 'callProcedure with OUTPUT parameters and a return status', async () => {
  const conn = await connect();
  try {
    await batch(conn, "IF OBJECT_ID('dbo.tedious_p') IS NOT NULL DROP PROCEDURE dbo.tedious_p");
    await batch(
      conn,
      `CREATE PROCEDURE dbo.tedious_p @a int, @b int OUTPUT, @s nvarchar(20) OUTPUT AS
       BEGIN
         SET NOCOUNT ON;
         SELECT @a AS a_in;
         SET @b = @a * 2;
         SET @s = N'out:' + CAST(@a AS nvarchar(10));
         RETURN 7
       END`,
    );
    const r = await run(conn, 'callProcedure', (cb) => {
      const req = new Request('dbo.tedious_p', cb);
      req.addParameter('a', TYPES.Int, 21);
      req.addOutputParameter('b', TYPES.Int);
      req.addOutputParameter('s', TYPES.NVarChar, null, { length: 20 });
      return req;
    });
    assert.deepEqual(r.rows, [[21]]);
    assert.equal(r.returned.b.value, 42);
    assert.equal(r.returned.s.value, 'out:21');
    assert.equal(r.returnStatus, 7);
    const last = r.dones.at(-1);
    assert.equal(last.kind, 'doneProc');
    assert.equal(last.status, 7);
    // An OUTPUT parameter with an input value.
    await batch(conn, "IF OBJECT_ID('dbo.tedious_inc') IS NOT NULL DROP PROCEDURE dbo.tedious_inc");
    await batch(conn, 'CREATE PROCEDURE dbo.tedious_inc @n int OUTPUT AS SET @n = @n + 1');
    const r2 = await run(conn, 'callProcedure', (cb) => {
      const req = new Request('dbo.tedious_inc', cb);
      req.addOutputParameter('n', TYPES.Int, 41);
      return req;
    });
    assert.equal(r2.returned.n.value, 42);
    assert.equal(r2.returnStatus, 0);
    await batch(conn, 'DROP PROCEDURE dbo.tedious_p; DROP PROCEDURE dbo.tedious_inc');
  } finally {
    await close(conn);
  }
});

featureTest('rollback', 'beginTransaction / rollbackTransaction (TM requests)', async () => {
  const conn = await connect();
  try {
    await batch(conn, 'CREATE TABLE #r (x int)');
    await tx(conn, 'beginTransaction', 'tx1', ISOLATION_LEVEL.READ_COMMITTED);
    await execSql(conn, 'INSERT INTO #r VALUES (@x)', [['x', TYPES.Int, 1]]);
    const inside = await batch(conn, 'SELECT @@TRANCOUNT, COUNT(*) FROM #r');
    assert.deepEqual(inside.rows, [[1, 1]]);
    await tx(conn, 'rollbackTransaction', 'tx1');
    const after = await batch(conn, 'SELECT @@TRANCOUNT, COUNT(*) FROM #r');
    assert.deepEqual(after.rows, [[0, 0]]);

    // A committed transaction keeps its row; a savepoint rolls back part of one.
    await tx(conn, 'beginTransaction');
    await batch(conn, 'INSERT INTO #r VALUES (2)');
    await tx(conn, 'saveTransaction', 'sp1');
    await batch(conn, 'INSERT INTO #r VALUES (3)');
    await tx(conn, 'rollbackTransaction', 'sp1');
    await tx(conn, 'commitTransaction');
    const kept = await batch(conn, 'SELECT @@TRANCOUNT, COUNT(*), MIN(x) FROM #r');
    assert.deepEqual(kept.rows, [[0, 1, 2]]);

    // transaction() helper: an error rolls back.
    await assert.rejects(
      new Promise((resolve, reject) => {
        conn.transaction((err, done) => {
          if (err) return reject(err);
          batch(conn, 'INSERT INTO #r VALUES (4)').then(() =>
            done(new Error('abort'), (e) => (e ? reject(e) : resolve())),
          );
        });
      }),
      /abort/,
    );
    const final = await batch(conn, 'SELECT @@TRANCOUNT, COUNT(*) FROM #r');
    assert.deepEqual(final.rows, [[0, 1]]);
  } finally {
    await close(conn);
  }
});

featureTest('types', 'every supported type, values compared exactly', async () => {
  const conn = await connect();
  try {
    const r = await batch(
      conn,
      `SELECT CAST(1 AS bit), CAST(200 AS tinyint), CAST(-3 AS smallint), CAST(4 AS int),
              CAST(5000000000 AS bigint), CAST(1.25 AS decimal(5, 2)), CAST(2.5 AS float),
              CAST(1.5 AS real), CAST(12.3456 AS money), CAST('2024-02-29' AS date),
              CAST('13:14:15.1234567' AS time(7)), CAST('2024-02-29 13:14:15.123' AS datetime),
              CAST('2024-02-29 13:14:15.1234567' AS datetime2(7)),
              CAST('2024-02-29 13:14:15.1234567 +02:00' AS datetimeoffset(7)),
              CAST('abc' AS varchar(10)), CAST(N'ünï' AS nvarchar(10)), CAST('x' AS char(3)),
              CAST(0x0102 AS varbinary(10)), CAST('6F9619FF-8B86-D011-B42D-00C04FC964FF' AS uniqueidentifier),
              REPLICATE(CAST('z' AS varchar(max)), 9000), CAST(NULL AS int),
              CAST(-922337203685477.5808 AS money), CAST(-12345678901234567.89 AS decimal(38, 2))`,
    );
    assert.equal(r.rows.length, 1);
    const row = r.rows[0];
    const meta = r.columns;
    assert.equal(row[0], true);
    assert.deepEqual(row.slice(1, 5), [200, -3, 4, '5000000000']);
    assert.equal(row[5], 1.25);
    assert.equal(meta[5].precision, 5);
    assert.equal(meta[5].scale, 2);
    assert.equal(row[6], 2.5);
    assert.equal(row[7], 1.5);
    assert.equal(row[8], 12.3456);
    assert.deepEqual(row[9], new Date(Date.UTC(2024, 1, 29)));
    // time(7): milliseconds in the Date, the remaining 100 ns units in nanosecondsDelta.
    assert.equal(meta[10].scale, 7);
    assert.deepEqual(row[10], new Date(Date.UTC(1970, 0, 1, 13, 14, 15, 123)));
    assert.equal(row[10].nanosecondsDelta, 4567 / 1e7);
    assert.deepEqual(row[11], new Date(Date.UTC(2024, 1, 29, 13, 14, 15, 123)));
    assert.equal(meta[12].scale, 7);
    assert.deepEqual(row[12], new Date(Date.UTC(2024, 1, 29, 13, 14, 15, 123)));
    assert.equal(row[12].nanosecondsDelta, 4567 / 1e7);
    // datetimeoffset comes back as the UTC instant.
    assert.deepEqual(row[13], new Date(Date.UTC(2024, 1, 29, 11, 14, 15, 123)));
    assert.equal(row[13].nanosecondsDelta, 4567 / 1e7);
    assert.equal(row[14], 'abc');
    assert.equal(row[15], 'ünï');
    assert.equal(row[16], 'x  ');
    assert.deepEqual(row[17], Buffer.from([1, 2]));
    assert.equal(row[18], '6F9619FF-8B86-D011-B42D-00C04FC964FF');
    assertText(row[19], 'z'.repeat(9000));
    assert.equal(meta[19].dataLength, 0xffff); // varchar(max): PLP
    assert.equal(row[20], null);
    assert.equal(row[21], -922337203685477.5808);
    assert.equal(row[22], -12345678901234567.89);
    assert.equal(meta[22].precision, 38);

    // The same types read from a table (NBCROW when a row has NULLs).
    await batch(
      conn,
      `CREATE TABLE #t (a int NULL, b nvarchar(10) NULL, c datetime2(3) NULL, d varbinary(max) NULL,
                        e decimal(18, 4) NULL, f bit NOT NULL)`,
    );
    await batch(
      conn,
      `INSERT INTO #t VALUES (1, N'x', '2001-02-03 04:05:06.789', 0xABCD, 123.4567, 0),
                             (NULL, NULL, NULL, NULL, NULL, 1)`,
    );
    const t = await batch(conn, 'SELECT a, b, c, d, e, f FROM #t ORDER BY f');
    assert.deepEqual(t.rows, [
      [1, 'x', new Date(Date.UTC(2001, 1, 3, 4, 5, 6, 789)), Buffer.from([0xab, 0xcd]), 123.4567, false],
      [null, null, null, null, null, true],
    ]);
  } finally {
    await close(conn);
  }
});

featureTest('error', 'error 208 arrives with its number, class and line; the connection keeps serving', async () => {
  const conn = await connect();
  try {
    const err = await batch(conn, '/* the error is on line 2 */\nSELECT * FROM no_such_table').then(
      () => assert.fail('no error'),
      (e) => e,
    );
    assert.equal(err.number, 208);
    assert.equal(err.lineNumber, 2);
    assert.equal(err.class, 16);
    assert.equal(err.message, "Invalid object name 'no_such_table'.");
    // Through sp_executesql too.
    const err2 = await execSql(conn, 'SELECT 1;\n\nSELECT * FROM no_such_table WHERE 1 = @x', [
      ['x', TYPES.Int, 1],
    ]).then(
      () => assert.fail('no error'),
      (e) => e,
    );
    assert.equal(err2.number, 208);
    assert.equal(err2.lineNumber, 3);
    // A statement-level error does not end the batch: the statement after it runs.
    const errs = [];
    const r = await run(conn, 'execSqlBatch', (cb) => {
      const req = new Request("SELECT 1/0;\nSELECT 'after'", cb);
      req.on('error', (e) => errs.push(e));
      return req;
    }).catch((e) => e);
    assert.equal(r.number, 8134);
    assert.deepEqual(r.outcome.rows, [['after']]);
    const ok = await batch(conn, 'SELECT 2');
    assert.deepEqual(ok.rows, [[2]]);
  } finally {
    await close(conn);
  }
});

featureTest('cancel', "connection.cancel() stops WAITFOR DELAY '00:00:30' at once", async () => {
  const conn = await connect();
  try {
    const started = Date.now();
    const p = batch(conn, "WAITFOR DELAY '00:00:30'");
    setTimeout(() => assert.ok(conn.cancel(), 'cancel() sent an attention'), 500);
    const err = await p.then(
      () => assert.fail('not cancelled'),
      (e) => e,
    );
    const elapsed = Date.now() - started;
    assert.equal(err.code, 'ECANCEL');
    assert.ok(elapsed < 10000, `cancel took ${elapsed} ms`);
    // The same connection serves the next request.
    const r = await batch(conn, 'SELECT 3');
    assert.deepEqual(r.rows, [[3]]);
  } finally {
    await close(conn);
  }
});

featureTest('cancel', 'requestTimeout cancels a long WAITFOR; the server keeps serving', async () => {
  const conn = await connect({ requestTimeout: 1000 });
  try {
    const started = Date.now();
    const err = await batch(conn, "WAITFOR DELAY '00:00:30'").then(
      () => assert.fail('not timed out'),
      (e) => e,
    );
    const elapsed = Date.now() - started;
    assert.equal(err.code, 'ETIMEOUT');
    assert.ok(elapsed < 10000, `timeout took ${elapsed} ms`);
    const r = await batch(conn, 'SELECT 4');
    assert.deepEqual(r.rows, [[4]]);
  } finally {
    await close(conn);
  }
  const other = await connect();
  try {
    const r = await batch(other, 'SELECT 5');
    assert.deepEqual(r.rows, [[5]]);
  } finally {
    await close(other);
  }
});

featureTest('bulk_copy', 'newBulkLoad / execBulkLoad: defaults, keepNulls, a duplicate fails the load', async () => {
  const conn = await connect();
  const bulkLoad = (options, rows) =>
    new Promise((resolve, reject) => {
      const bl = conn.newBulkLoad('dbo.tedious_bulk', options, (err, rowCount) => (err ? reject(err) : resolve(rowCount)));
      bl.addColumn('name', TYPES.NVarChar, { length: 20, nullable: false });
      bl.addColumn('n', TYPES.Int, { nullable: true });
      bl.addColumn('at', TYPES.DateTime2, { nullable: true, scale: 3 });
      conn.execBulkLoad(bl, rows);
    });
  try {
    await batch(conn, "IF OBJECT_ID('dbo.tedious_bulk') IS NOT NULL DROP TABLE dbo.tedious_bulk");
    await batch(
      conn,
      'CREATE TABLE dbo.tedious_bulk (id int IDENTITY PRIMARY KEY, name nvarchar(20) NOT NULL UNIQUE, n int DEFAULT 5, at datetime2(3) NULL)',
    );
    const at = new Date(Date.UTC(2024, 0, 2, 3, 4, 5, 678));
    assert.equal(await bulkLoad({ lockTable: true }, [{ name: 'a', n: 1, at }, { name: 'b', n: null, at: null }]), 2);
    assert.equal(await bulkLoad({ keepNulls: true }, [{ name: 'c', n: null, at: null }]), 1);
    await assert.rejects(bulkLoad({}, [{ name: 'd', n: 1, at: null }, { name: 'a', n: 1, at: null }]), (e) => e.number === 2627);
    const r = await batch(conn, 'SELECT id, name, n, at FROM dbo.tedious_bulk ORDER BY id');
    assert.deepEqual(r.rows, [
      [1, 'a', 1, at],
      [2, 'b', 5, null],
      [3, 'c', null, null],
    ]);
    await batch(conn, 'DROP TABLE dbo.tedious_bulk');
  } finally {
    await close(conn);
  }
});

featureTest('tvp', 'a TYPES.TVP parameter to a procedure', async () => {
  const conn = await connect();
  try {
    await batch(conn, "IF OBJECT_ID('dbo.tedious_tvp_sum') IS NOT NULL DROP PROCEDURE dbo.tedious_tvp_sum");
    await batch(conn, 'DROP TYPE IF EXISTS dbo.tedious_pairs');
    await batch(conn, 'CREATE TYPE dbo.tedious_pairs AS TABLE (k int NOT NULL, v nvarchar(20) NULL)');
    await batch(
      conn,
      'CREATE PROCEDURE dbo.tedious_tvp_sum @rows dbo.tedious_pairs READONLY AS SELECT COUNT(*), SUM(k), MAX(v) FROM @rows',
    );
    const table = {
      name: 'tedious_pairs',
      schema: 'dbo',
      columns: [
        { name: 'k', type: TYPES.Int },
        { name: 'v', type: TYPES.NVarChar, length: 20 },
      ],
      rows: [
        [1, 'x'],
        [2, null],
        [3, 'y'],
      ],
    };
    const r = await run(conn, 'callProcedure', (cb) => {
      const req = new Request('dbo.tedious_tvp_sum', cb);
      req.addParameter('rows', TYPES.TVP, table);
      return req;
    });
    assert.deepEqual(r.rows, [[3, 6, 'y']]);
    await batch(conn, 'DROP PROCEDURE dbo.tedious_tvp_sum; DROP TYPE dbo.tedious_pairs');
  } finally {
    await close(conn);
  }
});
