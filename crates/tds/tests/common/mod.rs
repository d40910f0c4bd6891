//! What the TDS integration tests' mock backends share.

use sql::request::RpcCall;
use sql::results::{ColumnInfo, Done, DoneKind, ResultSink, ReturnValue, SinkError};
use types::Value;

/// The mock RPC: echoes the input parameters as one row, returns status 0, and sends
/// every OUTPUT parameter back as 42.
pub fn echo_rpc(call: &RpcCall, sink: &mut dyn ResultSink) -> Result<(), SinkError> {
    let inputs: Vec<_> = call.params.iter().filter(|p| !p.output).collect();
    let cols: Vec<ColumnInfo> =
        inputs.iter().map(|p| ColumnInfo::new(p.name.clone().unwrap_or_default(), p.ty, true)).collect();
    sink.columns(&cols)?;
    sink.row(&inputs.iter().map(|p| p.value.clone()).collect::<Vec<_>>())?;
    sink.done(Done { kind: DoneKind::InProc, row_count: Some(1), error: false, in_xact: false })?;
    sink.return_status(0)?;
    for (i, p) in call.params.iter().enumerate() {
        if p.output {
            sink.return_value(&ReturnValue {
                name: p.name.clone().unwrap_or_default(),
                ordinal: i as u16,
                ty: p.ty,
                value: Value::Int(42),
            })?;
        }
    }
    sink.done(Done { kind: DoneKind::Proc, row_count: None, error: false, in_xact: false })
}
