//! Procedure tokens as FreeTDS (pymssql, tsql) expects them from SQL Server: the name an
//! RPC's OUTPUT parameter comes back under (the name the caller sent, empty for a parameter
//! passed by position; db-lib otherwise files the value under its name as well as its
//! position), and RETURNSTATUS + DONEPROC after a procedure EXECuted by a SQL batch.

mod common;

use common::*;
use sql::request::{ProcRef, RpcCall, RpcParam};
use sql::results::{CollectSink, DoneKind, Event, ReturnValue};
use types::{SqlType, Value};

fn return_values(s: &mut engine::Session, params: Vec<RpcParam>) -> Vec<ReturnValue> {
    let call = RpcCall { procedure: ProcRef::Name("dbo.p".into()), params };
    let mut sink = CollectSink::default();
    s.execute_rpc(&call, &mut sink);
    assert!(sink.errors().is_empty(), "{:?}", sink.errors());
    sink.events
        .iter()
        .filter_map(|e| match e {
            Event::ReturnValue(v) => Some(v.clone()),
            _ => None,
        })
        .collect()
}

fn param(name: Option<&str>, value: i32, output: bool) -> RpcParam {
    RpcParam { name: name.map(str::to_string), ty: SqlType::Int, value: Value::Int(value), output, table: None }
}

#[test]
fn rpc_output_names_follow_the_caller() {
    let inst = memory();
    let mut s = session(&inst);
    let mut sink = CollectSink::default();
    s.execute_batch("CREATE PROCEDURE dbo.p @a int, @b int OUTPUT AS BEGIN SET @b = @a * 2; RETURN 7 END", &mut sink);
    assert!(sink.errors().is_empty(), "{:?}", sink.errors());

    let positional = return_values(&mut s, vec![param(None, 21, false), param(None, 0, true)]);
    assert_eq!(
        positional,
        vec![ReturnValue { name: String::new(), ordinal: 1, ty: SqlType::Int, value: Value::Int(42) }]
    );

    let named = return_values(&mut s, vec![param(Some("@a"), 5, false), param(Some("@b"), 0, true)]);
    assert_eq!(named, vec![ReturnValue { name: "@b".into(), ordinal: 1, ty: SqlType::Int, value: Value::Int(10) }]);
}

#[test]
fn batch_exec_sends_return_status_and_doneproc() {
    let inst = memory();
    let mut s = session(&inst);
    for text in [
        "CREATE PROCEDURE dbo.inner_p AS RETURN 3",
        "CREATE PROCEDURE dbo.p @a int, @b int OUTPUT AS BEGIN EXEC dbo.inner_p; SET @b = @a * 2; RETURN 7 END",
    ] {
        let mut sink = CollectSink::default();
        s.execute_batch(text, &mut sink);
        assert!(sink.errors().is_empty(), "{:?}", sink.errors());
    }
    let mut sink = CollectSink::default();
    s.execute_batch("DECLARE @b int; EXEC dbo.p 5, @b OUTPUT; SELECT @b", &mut sink);
    assert!(sink.errors().is_empty(), "{:?}", sink.errors());
    // Only the procedure the batch itself EXECutes reports its status (not dbo.inner_p).
    let statuses: Vec<i32> =
        sink.events.iter().filter_map(|e| if let Event::ReturnStatus(n) = e { Some(*n) } else { None }).collect();
    assert_eq!(statuses, vec![7]);
    let at = sink.events.iter().position(|e| matches!(e, Event::ReturnStatus(_))).unwrap();
    match &sink.events[at + 1] {
        Event::Done(d) => assert_eq!(d.kind, DoneKind::Proc),
        other => panic!("after RETURNSTATUS: {other:?}"),
    }
    assert_eq!(sink.result_sets()[0].1, vec![vec![Value::Int(10)]]);
}

/// The DONE tokens of a stream, as (kind, count).
fn dones(sink: &CollectSink) -> Vec<(DoneKind, Option<u64>)> {
    sink.events
        .iter()
        .filter_map(|e| match e {
            Event::Done(d) => Some((d.kind, d.row_count)),
            _ => None,
        })
        .collect()
}

#[test]
fn print_cursor_statements_and_conditions_end_with_a_done() {
    // As SQL Server sends them (go-mssqldb's message queue tests count them): PRINT ends
    // with a DONE of its own, so a message between result sets stays between them.
    let inst = memory();
    let mut s = session(&inst);
    let mut sink = CollectSink::default();
    s.execute_batch("PRINT 'msg1'; SELECT 100 AS c; PRINT 'msg2'", &mut sink);
    assert!(sink.errors().is_empty(), "{:?}", sink.errors());
    let order: Vec<&str> = sink
        .events
        .iter()
        .filter_map(|e| match e {
            Event::Message(_) => Some("message"),
            Event::Columns(_) => Some("columns"),
            Event::Row(_) => Some("row"),
            Event::Done(_) => Some("done"),
            _ => None,
        })
        .collect();
    assert_eq!(order, ["message", "done", "columns", "row", "done", "message", "done"]);
    assert_eq!(
        dones(&sink),
        vec![(DoneKind::Statement, None), (DoneKind::Statement, Some(1)), (DoneKind::Statement, None)]
    );

    // In a procedure: DECLARE CURSOR, OPEN, each FETCH, each evaluation of the WHILE
    // condition, each PRINT, CLOSE and DEALLOCATE; not the DECLARE of a variable.
    let mut sink = CollectSink::default();
    s.execute_batch(
        "CREATE PROCEDURE dbo.cur AS
         BEGIN
             DECLARE @tmp int;
             DECLARE c CURSOR FOR SELECT 1 UNION SELECT 2;
             OPEN c;
             FETCH NEXT FROM c INTO @tmp;
             WHILE @@FETCH_STATUS = 0
             BEGIN
                 PRINT @tmp;
                 FETCH NEXT FROM c INTO @tmp;
             END;
             CLOSE c;
             DEALLOCATE c;
         END",
        &mut sink,
    );
    assert!(sink.errors().is_empty(), "{:?}", sink.errors());
    let mut sink = CollectSink::default();
    s.execute_batch("EXEC dbo.cur", &mut sink);
    assert!(sink.errors().is_empty(), "{:?}", sink.errors());
    let d = dones(&sink);
    assert_eq!(d.iter().filter(|(k, c)| *k == DoneKind::InProc && c.is_none()).count(), 12, "{d:?}");
    assert_eq!(d.iter().filter(|(k, _)| *k == DoneKind::Proc).count(), 1, "{d:?}");
}
