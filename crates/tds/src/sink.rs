//! The [`ResultSink`] the server hands to the executor: it encodes each event as tokens
//! into packets of the negotiated size and passes complete packets to a [`PacketOut`]
//! (in the server, a bounded channel to the connection's task).
//!
//! Two rules of the token stream are kept here rather than by the executor:
//! - the last DONE of a response has no MORE bit, all others do. The sink holds back the
//!   latest DONE until it sees what comes next; [`TokenSink::finish`] hands the held
//!   DONE and the unfinished last packet to whoever ends the response (the connection
//!   task, which alone knows whether an attention must be acknowledged after it);
//! - once the session's cancel flag is set (attention) or the client is gone, every call
//!   returns `SinkError::Cancelled` and writes nothing more.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use sql::results::{ColumnInfo, Done, EnvChange, Message, ResultSink, ReturnValue, SinkError, SinkResult};
use types::{SqlError, Value};

use crate::packet::{PacketType, PacketWriter};
use crate::token::{self, done_status, ColumnEncoding, DoneToken};

/// The client went away: packets can no longer be delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientGone;

/// Where complete packets go.
pub trait PacketOut {
    fn send(&mut self, packet: Vec<u8>) -> Result<(), ClientGone>;
    /// Pushes on whatever `send` kept back (PRINT/RAISERROR WITH NOWAIT).
    fn flush(&mut self) -> Result<(), ClientGone> {
        Ok(())
    }
    /// A buffer of a packet already written out, for the sink to reuse (None when
    /// there is none, or the packets are not written here).
    fn reclaim(&mut self) -> Option<Vec<u8>> {
        None
    }
}

impl PacketOut for Vec<Vec<u8>> {
    fn send(&mut self, packet: Vec<u8>) -> Result<(), ClientGone> {
        self.push(packet);
        Ok(())
    }
}

/// The end of a response, handed over by [`TokenSink::finish`].
#[derive(Debug)]
pub struct ResponseTail {
    pub writer: PacketWriter,
    /// The DONE held back for its MORE bit.
    pub pending_done: Option<DoneToken>,
    /// An ERROR token was sent after the last DONE (the final DONE gets the ERROR bit).
    pub error_since_done: bool,
    /// The token to end the response with when no DONE is pending (DONE, or DONEPROC
    /// after RPC calls).
    pub default_done: u8,
    /// An error of severity 20 or more was sent: the connection is to be closed.
    pub fatal: bool,
}

impl ResponseTail {
    /// Writes the last tokens and returns the remaining packets (the last with EOM).
    /// With `attention`, the cancelled request's response ends as any other and a second
    /// message follows: a DONE with the ATTN bit, the acknowledgement of the client's
    /// cancel. Each client message (the request, then the attention) gets a response
    /// message of its own, as from SQL Server: tedious reads the acknowledgement as the
    /// message after the response, and drivers that read tokens until DONE(ATTN) cross
    /// the message boundary.
    pub fn finish(mut self, attention: bool) -> Vec<Vec<u8>> {
        let mut b = Vec::with_capacity(16);
        // After a fatal error (the connection closes next) the last DONE carries SRVERROR,
        // as SQL Server's does: drivers then report a server error, not a statement's.
        let fatal = if self.fatal { done_status::SRVERROR } else { 0 };
        match self.pending_done {
            // A DONEINPROC must be followed by another DONE-family token (MS-TDS
            // 2.2.7.7): a batch that an error ended inside a procedure, trigger or
            // dynamic SQL still ends with a final DONE (or DONEPROC), carrying the error.
            Some(mut d) if d.token == token::token_type::DONEINPROC => {
                d.status |= done_status::MORE;
                d.encode(&mut b);
                let error =
                    if d.status & done_status::ERROR != 0 || self.error_since_done { done_status::ERROR } else { 0 };
                let status = error | (d.status & done_status::INXACT) | fatal;
                DoneToken { token: self.default_done, status, cur_cmd: 0, row_count: 0 }.encode(&mut b);
            }
            Some(mut d) => {
                d.status |= fatal;
                d.encode(&mut b)
            }
            None => {
                let status = if self.error_since_done { done_status::ERROR } else { done_status::FINAL };
                DoneToken { token: self.default_done, status: status | fatal, cur_cmd: 0, row_count: 0 }.encode(&mut b);
            }
        }
        self.writer.write(&b);
        let (spid, packet_size) = (self.writer.spid(), self.writer.packet_size() as u32);
        let mut packets = self.writer.finish();
        if attention {
            packets.push(attention_ack(spid, packet_size));
        }
        packets
    }
}

/// The acknowledgement of an attention, a message of its own: DONE with the ATTN bit.
pub fn attention_ack(spid: u16, packet_size: u32) -> Vec<u8> {
    let mut b = Vec::with_capacity(13);
    DoneToken { token: token::token_type::DONE, status: done_status::ATTN, cur_cmd: 0, row_count: 0 }.encode(&mut b);
    crate::packet::encode_message(PacketType::TabularResult, spid, packet_size, &b)
}

pub struct TokenSink<O: PacketOut> {
    writer: PacketWriter,
    out: O,
    cancel: Arc<AtomicBool>,
    server_name: String,
    columns: Vec<ColumnEncoding>,
    pending_done: Option<DoneToken>,
    error_since_done: bool,
    fatal: bool,
    stopped: bool,
    /// Scratch buffer for one token.
    buf: Vec<u8>,
    /// The CurCmd of the next DONE ([`ResultSink::command`]).
    cmd: u16,
    /// Always Encrypted was acknowledged at login: COLMETADATA carries a CEK table.
    cek_table: bool,
}

impl<O: PacketOut> TokenSink<O> {
    pub fn new(out: O, spid: u16, packet_size: u32, cancel: Arc<AtomicBool>, server_name: String) -> TokenSink<O> {
        TokenSink {
            writer: PacketWriter::new(PacketType::TabularResult, spid, packet_size),
            out,
            cancel,
            server_name,
            columns: Vec::new(),
            pending_done: None,
            error_since_done: false,
            fatal: false,
            stopped: false,
            buf: Vec::new(),
            cmd: 0,
            cek_table: false,
        }
    }

    /// For a connection that negotiated Always Encrypted (see `token::put_colmetadata`).
    pub fn with_column_encryption(mut self, on: bool) -> Self {
        self.cek_table = on;
        self
    }

    /// Whether the client cancelled or went away.
    pub fn is_stopped(&mut self) -> bool {
        if !self.stopped && self.cancel.load(Ordering::Acquire) {
            self.stopped = true;
        }
        self.stopped
    }

    fn check(&mut self) -> SinkResult {
        if self.is_stopped() {
            Err(SinkError::Cancelled)
        } else {
            Ok(())
        }
    }

    /// Sends complete packets onward, and takes back the buffers of those written out.
    fn drain(&mut self) -> SinkResult {
        if !self.writer.has_ready() {
            return Ok(());
        }
        for p in self.writer.take_ready() {
            if self.out.send(p).is_err() {
                self.stopped = true;
                return Err(SinkError::Cancelled);
            }
        }
        while let Some(b) = self.out.reclaim() {
            self.writer.recycle(b);
        }
        Ok(())
    }

    /// Writes the held DONE (with MORE: something follows it).
    fn release_done(&mut self) {
        if let Some(mut d) = self.pending_done.take() {
            d.status |= done_status::MORE;
            let mut b = Vec::with_capacity(13);
            d.encode(&mut b);
            self.writer.write(&b);
        }
    }

    /// Writes a token built in `self.buf`.
    fn emit(&mut self) -> SinkResult {
        self.release_done();
        let b = std::mem::take(&mut self.buf);
        self.writer.write(&b);
        self.buf = b;
        self.buf.clear();
        self.drain()
    }

    /// Writes raw token bytes (login response pieces, RESETCONNECTION acknowledgement).
    pub fn raw(&mut self, bytes: &[u8]) -> SinkResult {
        self.check()?;
        self.buf.clear();
        self.buf.extend_from_slice(bytes);
        self.emit()
    }

    /// An error the server itself reports (a malformed request, an encoding failure).
    pub fn server_error(&mut self, e: &SqlError) -> SinkResult {
        self.check()?;
        self.buf.clear();
        token::put_message(&mut self.buf, false, e, &self.server_name);
        self.error_since_done = true;
        self.emit()
    }

    /// Ends the response; see [`ResponseTail::finish`].
    pub fn finish(self, default_done: u8) -> (ResponseTail, O) {
        (
            ResponseTail {
                writer: self.writer,
                pending_done: self.pending_done,
                error_since_done: self.error_since_done,
                default_done,
                fatal: self.fatal,
            },
            self.out,
        )
    }
}

impl<O: PacketOut> ResultSink for TokenSink<O> {
    fn columns(&mut self, columns: &[ColumnInfo]) -> SinkResult {
        self.check()?;
        self.buf.clear();
        self.columns = token::put_colmetadata(&mut self.buf, columns, self.cek_table);
        self.emit()
    }

    fn row(&mut self, row: &[Value]) -> SinkResult {
        self.check()?;
        self.release_done();
        // Encoded straight into the packet (the commonest token by far).
        let columns = &self.columns;
        if let Err(e) = self.writer.write_with(|out| token::put_row(out, columns, row)) {
            // An executor bug: report it and stop the batch rather than send a broken row.
            let err = SqlError::new(8630, 16, 1, format!("Internal error: {e}."));
            self.server_error(&err)?;
            self.stopped = true;
            return Err(SinkError::Cancelled);
        }
        self.drain()
    }

    fn command(&mut self, cmd: u16) {
        self.cmd = cmd;
    }

    fn done(&mut self, done: Done) -> SinkResult {
        self.check()?;
        self.release_done();
        let mut token = DoneToken::from_done(&done);
        token.cur_cmd = std::mem::take(&mut self.cmd);
        self.pending_done = Some(token);
        self.error_since_done = false;
        self.drain()
    }

    fn message(&mut self, message: &Message) -> SinkResult {
        self.check()?;
        self.buf.clear();
        token::put_message(&mut self.buf, message.info, &message.error, &self.server_name);
        if !message.info {
            self.error_since_done = true;
        }
        if message.error.is_fatal() {
            self.fatal = true;
        }
        self.emit()
    }

    fn env_change(&mut self, change: &EnvChange) -> SinkResult {
        self.check()?;
        self.buf.clear();
        token::put_env_change(&mut self.buf, change);
        self.emit()
    }

    fn return_status(&mut self, status: i32) -> SinkResult {
        self.check()?;
        self.buf.clear();
        token::put_return_status(&mut self.buf, status);
        self.emit()
    }

    fn return_value(&mut self, value: &ReturnValue) -> SinkResult {
        self.check()?;
        self.buf.clear();
        if let Err(e) = token::put_return_value(&mut self.buf, value) {
            let err = SqlError::new(8630, 16, 1, format!("Internal error: {e}."));
            return self.server_error(&err);
        }
        self.emit()
    }

    fn flush(&mut self) -> SinkResult {
        self.check()?;
        // A held DONE stays held: what follows decides its MORE bit. Everything before
        // it goes out now.
        self.writer.flush_partial();
        self.drain()?;
        if self.out.flush().is_err() {
            self.stopped = true;
            return Err(SinkError::Cancelled);
        }
        Ok(())
    }
}
