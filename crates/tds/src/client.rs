//! A blocking TDS 7.4 client over `std::net::TcpStream`, built from this crate's codec:
//! PRELOGIN (no encryption), LOGIN7, SQL batches and RPC calls, and an incremental token
//! decoder so a result of any size streams through [`Client::batch_rows`] with memory
//! bounded by one token.
//!
//! It serves the tools and benchmarks that drive a server from Rust (`mesquite stress`,
//! `bench/tds`), and tests of the server through a real socket. It does not speak TLS: it
//! offers ENCRYPT_NOT_SUP and fails with [`ClientError::EncryptionRequired`] when the
//! server insists.
//!
//! Server errors inside a batch (ERROR tokens) are results, not failures: a batch goes on
//! after most errors, so they come back in [`BatchResult::errors`] beside the result sets
//! and row counts. `Err` means the connection itself failed (I/O, a malformed response, a
//! refused login).

use std::fmt;
use std::io::{BufReader, Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::time::Duration;

use types::{SqlType, Value};

use crate::error::TdsError;
use crate::login::{self, Login7};
use crate::packet::{self, PacketHeader, PacketType, HEADER_LEN};
use crate::prelogin::{self, PreLogin};
use crate::rpc;
use crate::token::{self, done_status, env_type, token_type, ColumnMeta, DoneToken, MessageToken};
use crate::types::{decode_param_value, decode_value_into, encode_param_value, TypeInfo};
use crate::wire::{put_b_varchar, put_utf16, utf16_to_string, Reader};

/// How long a TCP connect may take per address before the next one is tried.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);

/// Where and how to log in.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientConfig {
    pub host: String,
    pub port: u16,
    pub user: String,
    pub password: String,
    /// The initial database (the login's default database when None).
    pub database: Option<String>,
    pub app_name: String,
    /// Requested packet size (512..=32767; 0 asks for the server's default).
    pub packet_size: u32,
}

impl ClientConfig {
    /// A SQL-login config with the defaults drivers use: no database, packet size 4096.
    pub fn new(host: impl Into<String>, port: u16, user: impl Into<String>, password: impl Into<String>) -> Self {
        ClientConfig {
            host: host.into(),
            port,
            user: user.into(),
            password: password.into(),
            database: None,
            app_name: "mesquite".to_string(),
            packet_size: packet::DEFAULT_PACKET_SIZE,
        }
    }
}

/// Why a connection or a request failed (as opposed to errors the server reported for a
/// statement, which are in [`BatchResult::errors`]).
#[derive(Debug)]
pub enum ClientError {
    Io(std::io::Error),
    /// The server's bytes did not follow the protocol.
    Protocol(String),
    /// The server refused the login (18456 and friends).
    Login(MessageToken),
    /// The server requires TLS, which this client does not implement.
    EncryptionRequired,
}

impl fmt::Display for ClientError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClientError::Io(e) => write!(f, "I/O error: {e}"),
            ClientError::Protocol(m) => write!(f, "protocol error: {m}"),
            ClientError::Login(m) => write!(f, "login failed: {}", message_text(m)),
            ClientError::EncryptionRequired => {
                f.write_str("the server requires encryption, which this client does not support (no TLS)")
            }
        }
    }
}

impl std::error::Error for ClientError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClientError::Io(e) => Some(e),
            _ => None,
        }
    }
}

impl From<std::io::Error> for ClientError {
    fn from(e: std::io::Error) -> Self {
        ClientError::Io(e)
    }
}

impl From<TdsError> for ClientError {
    fn from(e: TdsError) -> Self {
        ClientError::Protocol(e.to_string())
    }
}

/// A server message in the shape SQL Server tools print it, on one line:
/// `Msg 8134, Level 16, State 1, Line 1: Divide by zero error encountered.`
/// (with `Procedure P, ` before `Line` when the message came from one).
pub fn message_text(m: &MessageToken) -> String {
    let proc = if m.procedure.is_empty() { String::new() } else { format!("Procedure {}, ", m.procedure) };
    format!("Msg {}, Level {}, State {}, {}Line {}: {}", m.number, m.class, m.state, proc, m.line, m.message)
}

/// One result set of a batch. With [`Client::batch_rows`] the rows went to the callback
/// and `rows` stays empty.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ResultSet {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<Value>>,
}

/// Everything a batch (or RPC) produced, in order within each kind.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BatchResult {
    pub result_sets: Vec<ResultSet>,
    /// ERROR tokens (severity 11 and up).
    pub errors: Vec<MessageToken>,
    /// INFO tokens (PRINT, RAISERROR below 11, "Changed database context ...").
    pub infos: Vec<MessageToken>,
    /// The count of every DONE-family token that carried one (rows affected or selected).
    pub row_counts: Vec<u64>,
    /// RETURNSTATUS of a procedure call.
    pub return_status: Option<i32>,
    /// OUTPUT parameters of an RPC: (name, value).
    pub return_values: Vec<(String, Value)>,
    /// The server acknowledged an attention (DONE with ATTN).
    pub cancelled: bool,
    /// The response's last DONE-family token: a DONE or DONEPROC without the MORE bit
    /// (MS-TDS 2.2.2.7; the client refuses a response that ends otherwise).
    pub final_done: Option<DoneToken>,
}

impl BatchResult {
    /// Sum of [`BatchResult::row_counts`].
    pub fn total_rows(&self) -> u64 {
        self.row_counts.iter().sum()
    }
}

/// A parameter of [`Client::rpc`].
#[derive(Debug, Clone, PartialEq)]
pub struct RpcParam {
    /// With the '@' (`@id`), or empty for a positional parameter.
    pub name: String,
    pub ty: SqlType,
    pub value: Value,
    pub output: bool,
}

impl RpcParam {
    pub fn new(name: impl Into<String>, ty: SqlType, value: Value) -> RpcParam {
        RpcParam { name: name.into(), ty, value, output: false }
    }
}

/// A logged-in connection.
pub struct Client {
    stream: BufReader<TcpStream>,
    spid: i32,
    database: String,
    packet_size: u32,
    /// The open transaction's descriptor (ENVCHANGE 8), sent back in ALL_HEADERS.
    transaction: u64,
    tds_version: u32,
    server_version: [u8; 4],
    /// Bytes of the current response not yet decoded.
    buf: Vec<u8>,
    decoder: Decoder,
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client").field("spid", &self.spid).field("database", &self.database).finish()
    }
}

impl Client {
    /// Connects, negotiates no encryption, logs in.
    pub fn connect(cfg: &ClientConfig) -> Result<Client, ClientError> {
        let tcp = connect_tcp(&cfg.host, cfg.port)?;
        // Round trips are the point of most callers: never wait for Nagle.
        tcp.set_nodelay(true)?;
        let mut c = Client {
            stream: BufReader::with_capacity(64 * 1024, tcp),
            spid: 0,
            database: String::new(),
            packet_size: packet::DEFAULT_PACKET_SIZE,
            transaction: 0,
            tds_version: 0,
            server_version: [0; 4],
            buf: Vec::new(),
            decoder: Decoder::default(),
        };
        c.prelogin()?;
        c.login(cfg)?;
        Ok(c)
    }

    fn prelogin(&mut self) -> Result<(), ClientError> {
        let pre = PreLogin {
            version: Some([0, 1, 0, 0, 0, 0]),
            encryption: Some(prelogin::ENCRYPT_NOT_SUP),
            instance: Some(Vec::new()),
            thread_id: Some(std::process::id()),
            mars: Some(0),
            ..PreLogin::default()
        };
        self.send(PacketType::PreLogin, &pre.encode())?;
        let data = self.read_whole_message()?;
        let resp = PreLogin::decode(&data)?;
        match resp.encryption.map(|e| e & !prelogin::ENCRYPT_CLIENT_CERT) {
            Some(prelogin::ENCRYPT_NOT_SUP) | Some(prelogin::ENCRYPT_OFF) | None => Ok(()),
            Some(prelogin::ENCRYPT_REQ) | Some(prelogin::ENCRYPT_ON) => Err(ClientError::EncryptionRequired),
            Some(other) => Err(ClientError::Protocol(format!("PRELOGIN answered encryption {other:#04x}"))),
        }
    }

    fn login(&mut self, cfg: &ClientConfig) -> Result<(), ClientError> {
        let host = std::env::var("HOSTNAME").unwrap_or_default();
        let l = Login7 {
            tds_version: login::TDS_7_4,
            packet_size: cfg.packet_size,
            client_prog_ver: 0x0100_0000,
            client_pid: std::process::id(),
            option_flags1: login::FLAG1_USE_DB | login::FLAG1_SET_LANG,
            option_flags2: login::FLAG2_ODBC,
            host_name: host,
            user_name: cfg.user.clone(),
            password: cfg.password.clone(),
            app_name: cfg.app_name.clone(),
            server_name: cfg.host.clone(),
            library_name: "mesquite-tds".to_string(),
            database: cfg.database.clone().unwrap_or_default(),
            ..Login7::default()
        };
        self.send(PacketType::Login7, &l.encode())?;
        let mut acked = false;
        let r = self.read_response(&mut Collect::Keep, &mut acked)?;
        if !acked {
            return Err(match r.errors.into_iter().next() {
                Some(e) => ClientError::Login(e),
                None => ClientError::Protocol("the login response has no LOGINACK".to_string()),
            });
        }
        if self.spid == 0 {
            // A server that leaves the header's SPID at 0: ask.
            let r = self.batch("SELECT @@SPID")?;
            if let Some(v) = r.result_sets.first().and_then(|rs| rs.rows.first()).and_then(|row| row.first()) {
                self.spid = match v {
                    Value::SmallInt(n) => i32::from(*n),
                    Value::Int(n) => *n,
                    _ => 0,
                };
            }
        }
        Ok(())
    }

    /// The session id the server gave this connection (@@SPID).
    pub fn spid(&self) -> i32 {
        self.spid
    }

    /// The current database, as the server last reported it (ENVCHANGE).
    pub fn database(&self) -> &str {
        &self.database
    }

    /// The packet size in use (the server's answer to the requested one).
    pub fn packet_size(&self) -> u32 {
        self.packet_size
    }

    /// The open transaction's descriptor, 0 outside a transaction.
    pub fn transaction_descriptor(&self) -> u64 {
        self.transaction
    }

    /// The TDS version and product version (major, minor, build hi, build lo) of LOGINACK.
    pub fn server_version(&self) -> (u32, [u8; 4]) {
        (self.tds_version, self.server_version)
    }

    /// Runs a SQL batch and keeps every row. Server errors are returned inside
    /// [`BatchResult`] (a batch goes on after most errors), not as `Err`.
    pub fn batch(&mut self, sql: &str) -> Result<BatchResult, ClientError> {
        self.send_batch(sql)?;
        self.read_response(&mut Collect::Keep, &mut false)
    }

    /// Runs a SQL batch, handing each row to `on_row` as it is decoded without keeping it:
    /// memory stays bounded by one packet and one row, whatever the result's size.
    pub fn batch_rows(&mut self, sql: &str, on_row: &mut dyn FnMut(&[Value])) -> Result<BatchResult, ClientError> {
        self.send_batch(sql)?;
        self.read_response(&mut Collect::Each(on_row), &mut false)
    }

    /// Calls a procedure by name over RPC (`sp_executesql` goes by its well-known id).
    /// OUTPUT parameters come back in [`BatchResult::return_values`].
    pub fn rpc(&mut self, proc: &str, params: &[RpcParam]) -> Result<BatchResult, ClientError> {
        let mut m = rpc::encode_all_headers(self.transaction, 1);
        if proc.eq_ignore_ascii_case("sp_executesql") {
            m.extend_from_slice(&0xFFFFu16.to_le_bytes());
            m.extend_from_slice(&10u16.to_le_bytes());
        } else {
            let units = proc.encode_utf16().count();
            let n = u16::try_from(units).map_err(|_| ClientError::Protocol("procedure name too long".into()))?;
            m.extend_from_slice(&n.to_le_bytes());
            put_utf16(&mut m, proc);
        }
        m.extend_from_slice(&0u16.to_le_bytes());
        for p in params {
            put_b_varchar(&mut m, &p.name);
            m.push(if p.output { rpc::PARAM_BY_REF } else { 0 });
            let ti = TypeInfo::for_sql_type(&p.ty, true);
            ti.encode(&mut m);
            encode_param_value(&ti, &p.ty, &p.value, &mut m)
                .map_err(|e| ClientError::Protocol(format!("parameter {}: {e}", p.name)))?;
        }
        self.send(PacketType::Rpc, &m)?;
        self.read_response(&mut Collect::Keep, &mut false)
    }

    /// `sp_executesql` with typed parameters: `params` are (name with '@', type, value).
    pub fn execute_sql(&mut self, sql: &str, params: &[RpcParam]) -> Result<BatchResult, ClientError> {
        let decl: Vec<String> = params.iter().map(|p| format!("{} {}", p.name, p.ty)).collect();
        let nvarchar = SqlType::NVarChar { len: types::Length::Max };
        let mut all = vec![
            RpcParam::new("@stmt", nvarchar, Value::String(sql.to_string())),
            RpcParam::new("@params", nvarchar, Value::String(decl.join(", "))),
        ];
        all.extend_from_slice(params);
        self.rpc("sp_executesql", &all)
    }

    /// Sends a SQL batch and returns without reading its response: a client that stops
    /// reading (tests of the server's backpressure, attention and KILL). The connection
    /// is of no further use for requests unless the response is read.
    pub fn send_batch_unread(&mut self, sql: &str) -> Result<(), ClientError> {
        self.send_batch(sql)
    }

    /// Bounds every later read of a response (None: wait as long as it takes).
    pub fn set_read_timeout(&mut self, timeout: Option<Duration>) -> Result<(), ClientError> {
        self.stream.get_ref().set_read_timeout(timeout)?;
        Ok(())
    }

    fn send_batch(&mut self, sql: &str) -> Result<(), ClientError> {
        let mut m = rpc::encode_all_headers(self.transaction, 1);
        m.reserve(sql.len() * 2);
        put_utf16(&mut m, sql);
        self.send(PacketType::SqlBatch, &m)
    }

    fn send(&mut self, ty: PacketType, payload: &[u8]) -> Result<(), ClientError> {
        let bytes = packet::encode_message(ty, 0, self.packet_size, payload);
        let s = self.stream.get_mut();
        s.write_all(&bytes)?;
        s.flush()?;
        Ok(())
    }

    /// Reads one packet's header and payload (appended to `self.buf`); returns the header.
    fn read_packet(&mut self) -> Result<PacketHeader, ClientError> {
        let mut hb = [0u8; HEADER_LEN];
        self.stream.read_exact(&mut hb)?;
        let h = PacketHeader::decode(&hb)?;
        if h.ty != PacketType::TabularResult as u8 {
            return Err(ClientError::Protocol(format!("the server sent packet type {:#04x}", h.ty)));
        }
        if h.spid != 0 {
            self.spid = i32::from(h.spid);
        }
        let at = self.buf.len();
        self.buf.resize(at + h.payload_len(), 0);
        self.stream.read_exact(&mut self.buf[at..])?;
        Ok(h)
    }

    /// A whole message (PRELOGIN's answer, which is not a token stream).
    fn read_whole_message(&mut self) -> Result<Vec<u8>, ClientError> {
        self.buf.clear();
        while !self.read_packet()?.is_eom() {}
        Ok(std::mem::take(&mut self.buf))
    }

    /// Reads a response to its last packet, decoding tokens as packets arrive. A
    /// malformed token ends decoding, but the rest of the message is still read so the
    /// connection stays in step for the next request.
    fn read_response(&mut self, collect: &mut Collect<'_>, login_acked: &mut bool) -> Result<BatchResult, ClientError> {
        self.buf.clear();
        self.decoder.columns.clear();
        self.decoder.types.clear();
        let mut out = BatchResult::default();
        let mut row: Vec<Value> = Vec::new();
        let mut failure: Option<ClientError> = None;
        // Unparsed bytes when a token was last found incomplete: retry once they double,
        // so a value spanning many packets is not re-parsed from its start per packet.
        let mut wait_for = 0usize;
        loop {
            let h = self.read_packet()?;
            let eom = h.is_eom();
            if failure.is_some() {
                self.buf.clear();
            } else if eom || self.buf.len() >= wait_for * 2 {
                let mut pos = 0;
                while pos < self.buf.len() {
                    let mut r = Reader::new(&self.buf[pos..]);
                    match self.decoder.next(&mut r, &mut row) {
                        Ok(item) => {
                            pos += r.pos();
                            if let Err(e) = self.apply(item, &mut row, &mut out, collect, login_acked) {
                                failure = Some(e);
                                break;
                            }
                        }
                        Err(TdsError::Truncated(_)) if !eom => {
                            wait_for = self.buf.len() - pos;
                            break;
                        }
                        Err(e) => {
                            failure = Some(e.into());
                            break;
                        }
                    }
                }
                if failure.is_some() {
                    self.buf.clear();
                } else {
                    self.buf.drain(..pos);
                    if self.buf.is_empty() {
                        wait_for = 0;
                    }
                }
            }
            if eom {
                break;
            }
        }
        self.buf.clear();
        match failure {
            Some(e) => Err(e),
            None => {
                // A stricter reader than most drivers: every response ends with a DONE
                // (or DONEPROC) whose MORE bit is clear; a DONEINPROC must be followed by
                // another DONE-family token (MS-TDS 2.2.7.7).
                match out.final_done {
                    Some(d) if d.status & done_status::MORE == 0 && d.token != token_type::DONEINPROC => Ok(out),
                    other => Err(ClientError::Protocol(format!(
                        "the response did not end with a final DONE (last DONE-family token: {other:?})"
                    ))),
                }
            }
        }
    }

    fn apply(
        &mut self,
        item: Item,
        row: &mut Vec<Value>,
        out: &mut BatchResult,
        collect: &mut Collect<'_>,
        login_acked: &mut bool,
    ) -> Result<(), ClientError> {
        match item {
            Item::Columns => out.result_sets.push(ResultSet {
                columns: self.decoder.columns.iter().map(|c| c.name.clone()).collect(),
                rows: Vec::new(),
            }),
            Item::Row => match collect {
                Collect::Keep => {
                    let n = row.len();
                    let full = std::mem::replace(row, Vec::with_capacity(n));
                    match out.result_sets.last_mut() {
                        Some(rs) => rs.rows.push(full),
                        None => return Err(ClientError::Protocol("ROW before COLMETADATA".into())),
                    }
                }
                Collect::Each(f) => f(row),
            },
            Item::Done(d) => {
                out.final_done = Some(d);
                if d.status & done_status::COUNT != 0 {
                    out.row_counts.push(d.row_count);
                }
                if d.status & done_status::ATTN != 0 {
                    out.cancelled = true;
                }
            }
            Item::Error(m) => out.errors.push(m),
            Item::Info(m) => out.infos.push(m),
            Item::Env { ty, new, old } => self.env_change(ty, &new, &old),
            Item::LoginAck { tds_version, version } => {
                *login_acked = true;
                self.tds_version = tds_version;
                self.server_version = version;
            }
            Item::ReturnStatus(s) => out.return_status = Some(s),
            Item::ReturnValue { name, value } => out.return_values.push((name, value)),
            Item::Skip => {}
        }
        Ok(())
    }

    fn env_change(&mut self, ty: u8, new: &[u8], _old: &[u8]) {
        match ty {
            env_type::DATABASE => self.database = utf16_to_string(new),
            env_type::PACKET_SIZE => {
                if let Ok(n) = utf16_to_string(new).parse::<u32>() {
                    self.packet_size = n.clamp(512, packet::MAX_PACKET_LEN as u32 - 1);
                }
            }
            env_type::BEGIN_TRAN => {
                let mut d = [0u8; 8];
                let n = new.len().min(8);
                d[..n].copy_from_slice(&new[..n]);
                self.transaction = u64::from_le_bytes(d);
            }
            // Commit, rollback, enlist/defect DTC, transaction ended.
            env_type::COMMIT_TRAN | env_type::ROLLBACK_TRAN | 11 | 12 | 17 => self.transaction = 0,
            _ => {}
        }
    }
}

/// What happens to decoded rows.
enum Collect<'a> {
    Keep,
    Each(&'a mut dyn FnMut(&[Value])),
}

fn connect_tcp(host: &str, port: u16) -> Result<TcpStream, ClientError> {
    let mut last: Option<std::io::Error> = None;
    for addr in (host, port).to_socket_addrs()? {
        match TcpStream::connect_timeout(&addr, CONNECT_TIMEOUT) {
            Ok(s) => return Ok(s),
            Err(e) => last = Some(e),
        }
    }
    Err(ClientError::Io(
        last.unwrap_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::NotFound, format!("no address for {host}:{port}"))
        }),
    ))
}

/// One decoded token, without the row values (they go to the caller's buffer).
#[derive(Debug)]
enum Item {
    Columns,
    Row,
    Done(DoneToken),
    Error(MessageToken),
    Info(MessageToken),
    Env { ty: u8, new: Vec<u8>, old: Vec<u8> },
    LoginAck { tds_version: u32, version: [u8; 4] },
    ReturnStatus(i32),
    ReturnValue { name: String, value: Value },
    Skip,
}

/// Decodes one token at a time from the front of a buffer. Any token may be incomplete
/// (`TdsError::Truncated`), in which case nothing is consumed and the state is unchanged,
/// so the caller can retry with more bytes.
#[derive(Debug, Default)]
struct Decoder {
    columns: Vec<ColumnMeta>,
    /// The SQL type of each column (`TypeInfo::sql_type`, once per result set).
    types: Vec<SqlType>,
}

fn decode_message(r: &mut Reader) -> crate::error::Result<MessageToken> {
    let len = usize::from(r.u16_le("ERROR/INFO")?);
    let mut b = Reader::new(r.bytes(len, "ERROR/INFO")?);
    // A complete token whose body is short is malformed, not truncated.
    token::message_body(&mut b).map_err(|_| TdsError::invalid("ERROR/INFO", "body shorter than its fields"))
}

impl Decoder {
    fn next(&mut self, r: &mut Reader, row: &mut Vec<Value>) -> crate::error::Result<Item> {
        use token_type::*;
        let t = r.u8("token")?;
        Ok(match t {
            COLMETADATA => {
                let n = r.u16_le("COLMETADATA")?;
                let mut cols = Vec::new();
                let mut types = Vec::new();
                if n != 0xFFFF {
                    for _ in 0..n {
                        let _user_type = r.u32_le("COLMETADATA")?;
                        let flags = r.u16_le("COLMETADATA")?;
                        let type_info = TypeInfo::decode_column(r)?;
                        let name = r.b_varchar("COLMETADATA")?;
                        types.push(type_info.sql_type()?);
                        cols.push(ColumnMeta { name, flags, type_info });
                    }
                }
                self.columns = cols;
                self.types = types;
                Item::Columns
            }
            // Values are decoded into the slots of the caller's row, whose string and
            // binary buffers the next row reuses.
            ROW => {
                row.resize(self.columns.len(), Value::Null);
                for ((c, ty), slot) in self.columns.iter().zip(&self.types).zip(row.iter_mut()) {
                    decode_value_into(&c.type_info, ty, r, slot)?;
                }
                Item::Row
            }
            NBCROW => {
                row.resize(self.columns.len(), Value::Null);
                let bitmap = r.bytes(self.columns.len().div_ceil(8), "NBCROW")?;
                for (i, ((c, ty), slot)) in self.columns.iter().zip(&self.types).zip(row.iter_mut()).enumerate() {
                    if bitmap[i / 8] & (1 << (i % 8)) != 0 {
                        *slot = Value::Null;
                    } else {
                        decode_value_into(&c.type_info, ty, r, slot)?;
                    }
                }
                Item::Row
            }
            DONE | DONEPROC | DONEINPROC => Item::Done(DoneToken {
                token: t,
                status: r.u16_le("DONE")?,
                cur_cmd: r.u16_le("DONE")?,
                row_count: r.u64_le("DONE")?,
            }),
            ERROR => Item::Error(decode_message(r)?),
            INFO => Item::Info(decode_message(r)?),
            LOGINACK => {
                let len = usize::from(r.u16_le("LOGINACK")?);
                let body = r.bytes(len, "LOGINACK")?;
                if body.len() < 10 {
                    return Err(TdsError::invalid("LOGINACK", format!("{} bytes", body.len())));
                }
                let tds_version = u32::from_be_bytes([body[1], body[2], body[3], body[4]]);
                let mut version = [0u8; 4];
                version.copy_from_slice(&body[body.len() - 4..]);
                Item::LoginAck { tds_version, version }
            }
            ENVCHANGE => {
                let len = usize::from(r.u16_le("ENVCHANGE")?);
                let body = r.bytes(len, "ENVCHANGE")?;
                let (ty, new, old) = token::env_change_body(&mut Reader::new(body))
                    .map_err(|_| TdsError::invalid("ENVCHANGE", "body shorter than its fields"))?;
                Item::Env { ty, new, old }
            }
            RETURNSTATUS => Item::ReturnStatus(r.i32_le("RETURNSTATUS")?),
            RETURNVALUE => {
                let _ordinal = r.u16_le("RETURNVALUE")?;
                let name = r.b_varchar("RETURNVALUE")?;
                let _status = r.u8("RETURNVALUE")?;
                let _user_type = r.u32_le("RETURNVALUE")?;
                let _flags = r.u16_le("RETURNVALUE")?;
                let type_info = TypeInfo::decode(r)?;
                let value = decode_param_value(&type_info, r)?;
                Item::ReturnValue { name, value }
            }
            FEATUREEXTACK => {
                loop {
                    let id = r.u8("FEATUREEXTACK")?;
                    if id == 0xFF {
                        break;
                    }
                    let n = r.u32_le("FEATUREEXTACK")? as usize;
                    r.skip(n, "FEATUREEXTACK")?;
                }
                Item::Skip
            }
            ORDER => {
                let len = usize::from(r.u16_le("ORDER")?);
                r.skip(len, "ORDER")?;
                Item::Skip
            }
            other => return Err(TdsError::invalid("token", format!("unknown token {other:#04x}"))),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token;
    use sql::results::ColumnInfo;

    /// A response with a result set, an error and a DONE, cut at every byte: decoding the
    /// pieces in order must give what decoding the whole gives.
    #[test]
    fn decoder_resumes_at_any_cut() {
        let mut b = Vec::new();
        let cols = token::put_colmetadata(
            &mut b,
            &[
                ColumnInfo::new("id", SqlType::Int, false),
                ColumnInfo::new("name", SqlType::NVarChar { len: types::Length::Max }, true),
            ],
            false,
        );
        token::put_row(&mut b, &cols, &[Value::Int(7), Value::String("seven".into())]).unwrap();
        token::put_row(&mut b, &cols, &[Value::Int(8), Value::Null]).unwrap();
        token::put_message(&mut b, false, &types::SqlError::new(8134, 16, 1, "Divide by zero").at_line(2), "S");
        token::DoneToken { token: token_type::DONE, status: done_status::COUNT, cur_cmd: 0, row_count: 2 }
            .encode(&mut b);

        let decode_all = |chunks: &[&[u8]]| -> Vec<String> {
            let mut d = Decoder::default();
            let mut buf: Vec<u8> = Vec::new();
            let mut row = Vec::new();
            let mut seen = Vec::new();
            for c in chunks {
                buf.extend_from_slice(c);
                let mut pos = 0;
                while pos < buf.len() {
                    let mut r = Reader::new(&buf[pos..]);
                    match d.next(&mut r, &mut row) {
                        Ok(item) => {
                            pos += r.pos();
                            seen.push(match item {
                                Item::Row => format!("row {row:?}"),
                                other => format!("{other:?}"),
                            });
                        }
                        Err(TdsError::Truncated(_)) => break,
                        Err(e) => panic!("{e}"),
                    }
                }
                buf.drain(..pos);
            }
            assert!(buf.is_empty());
            seen
        };
        let whole = decode_all(&[&b]);
        assert_eq!(whole.len(), 5);
        assert!(whole[1].contains("seven"), "{whole:?}");
        assert!(whole[3].contains("8134"), "{whole:?}");
        for cut in 1..b.len() {
            assert_eq!(decode_all(&[&b[..cut], &b[cut..]]), whole, "cut at {cut}");
        }
    }

    /// Rows decoded into one reused row buffer come out exactly as sent: strings that
    /// shrink, grow, vanish (NULL, NBCROW) and come back, a new result set of other types.
    #[test]
    fn rows_reuse_the_row_buffer_exactly() {
        let varchar = SqlType::VarChar { len: types::Length::Bounded(20) };
        let mut b = Vec::new();
        let cols = token::put_colmetadata(
            &mut b,
            &[ColumnInfo::new("id", SqlType::Int, true), ColumnInfo::new("name", varchar, true)],
            false,
        );
        let names = [Some("a longer name"), Some(""), None, Some("x"), Some("é€ latin"), None, Some("abc")];
        let mut sent = Vec::new();
        for (i, n) in names.iter().enumerate() {
            let row = vec![
                if i == 5 { Value::Null } else { Value::Int(i as i32) },
                n.map_or(Value::Null, |s| Value::String(s.to_string())),
            ];
            token::put_row(&mut b, &cols, &row).unwrap();
            sent.push(row);
        }
        let cols2 = token::put_colmetadata(
            &mut b,
            &[ColumnInfo::new("v", SqlType::VarBinary { len: types::Length::Bounded(4) }, true)],
            false,
        );
        for v in [vec![1u8, 2, 3], vec![], vec![9]] {
            token::put_row(&mut b, &cols2, &[Value::Binary(v.clone())]).unwrap();
            sent.push(vec![Value::Binary(v)]);
        }
        let mut d = Decoder::default();
        let mut row = Vec::new();
        let mut got = Vec::new();
        let mut r = Reader::new(&b);
        while !r.is_empty() {
            if let Item::Row = d.next(&mut r, &mut row).unwrap() {
                got.push(row.clone());
            }
        }
        assert_eq!(got, sent);
    }

    #[test]
    fn message_text_is_one_line() {
        let m = MessageToken {
            number: 8134,
            state: 1,
            class: 16,
            message: "Divide by zero error encountered.".into(),
            server: "S".into(),
            procedure: String::new(),
            line: 3,
        };
        assert_eq!(message_text(&m), "Msg 8134, Level 16, State 1, Line 3: Divide by zero error encountered.");
        let p = MessageToken { procedure: "p".into(), ..m };
        assert_eq!(
            message_text(&p),
            "Msg 8134, Level 16, State 1, Procedure p, Line 3: Divide by zero error encountered."
        );
    }
}
