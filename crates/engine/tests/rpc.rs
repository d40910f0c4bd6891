//! RPC calls through sessions: the response's token order and OUTPUT parameter types as
//! drivers expect them from SQL Server; SET IMPLICIT_TRANSACTIONS as mssql-jdbc uses it.

mod common;

use common::*;
use sql::request::{ProcRef, RpcCall, RpcParam};
use sql::results::{CollectSink, DoneKind, Event, ReturnValue};
use types::{SqlType, Value};

fn ok(s: &mut engine::Session, text: &str) -> CollectSink {
    let mut sink = CollectSink::default();
    s.execute_batch(text, &mut sink);
    assert!(sink.errors().is_empty(), "{text}: {:?}", sink.errors());
    sink
}

#[test]
fn rpc_output_after_return_status_in_the_callers_type() {
    let inst = memory();
    let mut s = session(&inst);
    ok(&mut s, "CREATE PROCEDURE dbo.p @flag bit OUTPUT AS BEGIN SET @flag = 1; SELECT 'row 1'; RETURN 3 END");
    let call = RpcCall {
        procedure: ProcRef::Name("dbo.p".into()),
        // The caller declares the OUTPUT parameter as bigint (go-mssqldb for an int64).
        params: vec![RpcParam {
            name: Some("@flag".into()),
            ty: SqlType::BigInt,
            value: Value::BigInt(5),
            output: true,
            table: None,
        }],
    };
    let mut sink = CollectSink::default();
    s.execute_rpc(&call, &mut sink);
    assert!(sink.errors().is_empty(), "{:?}", sink.errors());
    let tail: Vec<&Event> = sink.events.iter().rev().take(4).collect::<Vec<_>>().into_iter().rev().collect();
    match tail.as_slice() {
        [Event::Done(inproc), Event::ReturnStatus(3), Event::ReturnValue(v), Event::Done(proc)] => {
            assert_eq!(inproc.kind, DoneKind::InProc);
            assert_eq!(proc.kind, DoneKind::Proc);
            assert_eq!(
                *v,
                ReturnValue { name: "@flag".into(), ordinal: 0, ty: SqlType::BigInt, value: Value::BigInt(1) }
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn implicit_transactions_begin_on_data_statements() {
    let inst = memory();
    let mut s = session(&inst);
    ok(&mut s, "CREATE TABLE dbo.t (v int)");
    ok(&mut s, "SET IMPLICIT_TRANSACTIONS ON");
    ok(&mut s, "SELECT @@TRANCOUNT");
    assert_eq!(s.transaction_descriptor(), 0, "SELECT without a table begins nothing");
    ok(&mut s, "INSERT INTO dbo.t VALUES (1)");
    assert_ne!(s.transaction_descriptor(), 0, "INSERT began a transaction");
    ok(&mut s, "IF @@TRANCOUNT > 0 ROLLBACK TRAN");
    assert_eq!(s.transaction_descriptor(), 0);
    ok(&mut s, "SET IMPLICIT_TRANSACTIONS OFF");
    let r = ok(&mut s, "SELECT COUNT(*) FROM dbo.t");
    assert_eq!(r.result_sets()[0].1, vec![vec![Value::Int(0)]]);
}
