//! Packet framing ([MS-TDS] 2.2.3): every message travels as one or more packets, each
//! with an 8-byte header.
//!
//! ```text
//! offset size  field
//! 0      1     Type      1 SQL batch, 3 RPC, 4 tabular result, 6 attention, 7 bulk load,
//!                        14 transaction manager, 16 LOGIN7, 17 SSPI, 18 PRELOGIN
//! 1      1     Status    0x01 EOM (last packet of the message), 0x02 IGNORE (discard the
//!                        message), 0x08 RESETCONNECTION, 0x10 RESETCONNECTIONSKIPTRAN
//! 2      2     Length    big-endian, header included (8..=32768)
//! 4      2     SPID      big-endian; the server puts the session id here, clients 0
//! 6      1     PacketID  incremented per packet, modulo 256 (informational)
//! 7      1     Window    0
//! 8      ...   payload
//! ```
//!
//! [`Reassembler`] joins packets into messages with a limit on the message size, so a
//! client cannot make the server hold more than that limit per connection.
//! [`PacketWriter`] cuts an outgoing message into packets of the negotiated size.

use crate::error::{Result, TdsError};

pub const HEADER_LEN: usize = 8;
/// The largest packet [MS-TDS] allows (negotiable sizes are 512..=32767; one more byte
/// of slack for clients that round up).
pub const MAX_PACKET_LEN: usize = 32768;
/// Packet size until LOGIN7 negotiates another.
pub const DEFAULT_PACKET_SIZE: u32 = 4096;

/// Packet types ([MS-TDS] 2.2.3.1.1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum PacketType {
    SqlBatch = 1,
    PreTds7Login = 2,
    Rpc = 3,
    TabularResult = 4,
    Attention = 6,
    BulkLoad = 7,
    FedAuthToken = 8,
    TransactionManager = 14,
    Login7 = 16,
    Sspi = 17,
    PreLogin = 18,
}

impl PacketType {
    pub fn from_u8(b: u8) -> Option<PacketType> {
        Some(match b {
            1 => PacketType::SqlBatch,
            2 => PacketType::PreTds7Login,
            3 => PacketType::Rpc,
            4 => PacketType::TabularResult,
            6 => PacketType::Attention,
            7 => PacketType::BulkLoad,
            8 => PacketType::FedAuthToken,
            14 => PacketType::TransactionManager,
            16 => PacketType::Login7,
            17 => PacketType::Sspi,
            18 => PacketType::PreLogin,
            _ => return None,
        })
    }
}

/// Packet status bits.
pub mod status {
    pub const NORMAL: u8 = 0x00;
    pub const EOM: u8 = 0x01;
    pub const IGNORE: u8 = 0x02;
    pub const RESET_CONNECTION: u8 = 0x08;
    pub const RESET_CONNECTION_SKIP_TRAN: u8 = 0x10;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PacketHeader {
    pub ty: u8,
    pub status: u8,
    /// Header included.
    pub length: u16,
    pub spid: u16,
    pub packet_id: u8,
    pub window: u8,
}

impl PacketHeader {
    /// Decodes and checks a header: a known type, a length of 8..=[`MAX_PACKET_LEN`].
    pub fn decode(b: &[u8; HEADER_LEN]) -> Result<PacketHeader> {
        let h = PacketHeader {
            ty: b[0],
            status: b[1],
            length: u16::from_be_bytes([b[2], b[3]]),
            spid: u16::from_be_bytes([b[4], b[5]]),
            packet_id: b[6],
            window: b[7],
        };
        if PacketType::from_u8(h.ty).is_none() {
            return Err(TdsError::UnexpectedPacket(h.ty));
        }
        let len = usize::from(h.length);
        if !(HEADER_LEN..=MAX_PACKET_LEN).contains(&len) {
            return Err(TdsError::invalid("packet length", format!("{len}")));
        }
        Ok(h)
    }

    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let l = self.length.to_be_bytes();
        let s = self.spid.to_be_bytes();
        [self.ty, self.status, l[0], l[1], s[0], s[1], self.packet_id, self.window]
    }

    pub fn packet_type(&self) -> Option<PacketType> {
        PacketType::from_u8(self.ty)
    }

    pub fn payload_len(&self) -> usize {
        usize::from(self.length).saturating_sub(HEADER_LEN)
    }

    pub fn is_eom(&self) -> bool {
        self.status & status::EOM != 0
    }
}

/// A complete message: the packets' payloads joined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub ty: PacketType,
    /// The status bits of the first packet (RESETCONNECTION is only meaningful there).
    pub status: u8,
    pub data: Vec<u8>,
}

impl Message {
    pub fn reset_connection(&self) -> bool {
        self.status & (status::RESET_CONNECTION | status::RESET_CONNECTION_SKIP_TRAN) != 0
    }
}

/// Joins packets into messages.
#[derive(Debug)]
pub struct Reassembler {
    max_message: usize,
    current: Option<Message>,
}

impl Reassembler {
    pub fn new(max_message: usize) -> Reassembler {
        Reassembler { max_message, current: None }
    }

    /// Whether a message is partly received.
    pub fn in_progress(&self) -> bool {
        self.current.is_some()
    }

    /// Adds one packet. Returns the message when this packet ends it. A packet with the
    /// IGNORE bit discards the message it belongs to; a packet of another type in the
    /// middle of a message, or a message beyond the size limit, is an error.
    pub fn push(&mut self, header: &PacketHeader, payload: &[u8]) -> Result<Option<Message>> {
        let ty = header.packet_type().ok_or(TdsError::UnexpectedPacket(header.ty))?;
        if payload.len() != header.payload_len() {
            return Err(TdsError::invalid("packet length", "payload does not match the header"));
        }
        let msg = match &mut self.current {
            Some(m) => {
                if m.ty != ty {
                    return Err(TdsError::invalid(
                        "packet sequence",
                        format!("packet type {:#04x} inside a message of type {:#04x}", header.ty, m.ty as u8),
                    ));
                }
                m
            }
            None => self.current.insert(Message { ty, status: header.status, data: Vec::new() }),
        };
        let size = msg.data.len() + payload.len();
        if size > self.max_message {
            self.current = None;
            return Err(TdsError::TooLarge { size, limit: self.max_message });
        }
        msg.data.extend_from_slice(payload);
        if header.status & status::IGNORE != 0 {
            // The client abandoned the message it was sending; it will not expect a reply.
            if header.is_eom() {
                self.current = None;
            }
            return Ok(None);
        }
        if header.is_eom() {
            return Ok(self.current.take());
        }
        Ok(None)
    }
}

/// Splits a byte stream into packets and messages: what a connection does with what it
/// reads, as one function (used by the fuzz target and tests). Returns the messages and
/// stops at the first error.
pub fn decode_stream(mut bytes: &[u8], max_message: usize) -> Result<Vec<Message>> {
    let mut r = Reassembler::new(max_message);
    let mut out = Vec::new();
    while !bytes.is_empty() {
        if bytes.len() < HEADER_LEN {
            return Err(TdsError::Truncated("packet header"));
        }
        let mut hb = [0u8; HEADER_LEN];
        hb.copy_from_slice(&bytes[..HEADER_LEN]);
        let h = PacketHeader::decode(&hb)?;
        let len = usize::from(h.length);
        if bytes.len() < len {
            return Err(TdsError::Truncated("packet payload"));
        }
        if let Some(m) = r.push(&h, &bytes[HEADER_LEN..len])? {
            out.push(m);
        }
        bytes = &bytes[len..];
    }
    if r.in_progress() {
        return Err(TdsError::Truncated("message"));
    }
    Ok(out)
}

/// Cuts an outgoing message into packets of `packet_size` bytes (header included).
/// Complete packets wait in [`PacketWriter::take_ready`]; the last one is produced by
/// [`PacketWriter::finish`] with EOM set.
#[derive(Debug)]
pub struct PacketWriter {
    ty: u8,
    spid: u16,
    packet_size: usize,
    next_id: u8,
    /// The packet being filled, header space included.
    buf: Vec<u8>,
    ready: Vec<Vec<u8>>,
    /// Buffers of packets already sent, handed back ([`PacketWriter::recycle`]) for the
    /// next packets: a long result reuses a few buffers instead of allocating one per
    /// packet.
    free: Vec<Vec<u8>>,
    /// Scratch for bytes written past a packet's end (see `write_with`).
    overflow: Vec<u8>,
}

/// Sent packet buffers kept for reuse (a group of 32 KB of 4 KB packets, and then some).
const FREE_PACKETS: usize = 16;

impl PacketWriter {
    pub fn new(ty: PacketType, spid: u16, packet_size: u32) -> PacketWriter {
        let packet_size = (packet_size as usize).clamp(512, MAX_PACKET_LEN);
        let mut w = PacketWriter {
            ty: ty as u8,
            spid,
            packet_size,
            next_id: 1,
            buf: Vec::new(),
            ready: Vec::new(),
            free: Vec::new(),
            overflow: Vec::new(),
        };
        w.start_packet();
        w
    }

    fn start_packet(&mut self) {
        self.buf = self.free.pop().unwrap_or_else(|| Vec::with_capacity(self.packet_size));
        self.buf.extend_from_slice(&[0u8; HEADER_LEN]);
    }

    /// Takes back the buffer of a packet that has been sent, for a later packet.
    pub fn recycle(&mut self, mut packet: Vec<u8>) {
        if self.free.len() < FREE_PACKETS && packet.capacity() >= self.packet_size {
            packet.clear();
            self.free.push(packet);
        }
    }

    pub fn packet_size(&self) -> usize {
        self.packet_size
    }

    pub fn spid(&self) -> u16 {
        self.spid
    }

    /// Bytes of payload written to the current packet.
    pub fn pending_len(&self) -> usize {
        self.buf.len() - HEADER_LEN
    }

    /// Whether anything was ever written or queued.
    pub fn is_empty(&self) -> bool {
        self.pending_len() == 0 && self.ready.is_empty() && self.next_id == 1
    }

    pub fn write(&mut self, mut bytes: &[u8]) {
        while !bytes.is_empty() {
            let room = self.packet_size - self.buf.len();
            let n = room.min(bytes.len());
            self.buf.extend_from_slice(&bytes[..n]);
            bytes = &bytes[n..];
            if self.buf.len() == self.packet_size {
                self.seal(status::NORMAL);
            }
        }
    }

    /// Lets `f` append to the message straight into the current packet's buffer (no
    /// copy through a buffer of its own), then moves whatever went past the packet's end
    /// into the packets after it. `f` must leave the bytes before its start as they
    /// were.
    pub fn write_with<R>(&mut self, f: impl FnOnce(&mut Vec<u8>) -> R) -> R {
        let r = f(&mut self.buf);
        if self.buf.len() >= self.packet_size {
            let mut over = std::mem::take(&mut self.overflow);
            over.clear();
            over.extend_from_slice(&self.buf[self.packet_size..]);
            self.buf.truncate(self.packet_size);
            self.seal(status::NORMAL);
            self.write(&over);
            self.overflow = over;
        }
        r
    }

    /// Whether complete packets wait to be taken.
    pub fn has_ready(&self) -> bool {
        !self.ready.is_empty()
    }

    fn seal(&mut self, st: u8) {
        let len = self.buf.len() as u16;
        let h =
            PacketHeader { ty: self.ty, status: st, length: len, spid: self.spid, packet_id: self.next_id, window: 0 };
        self.buf[..HEADER_LEN].copy_from_slice(&h.encode());
        self.next_id = self.next_id.wrapping_add(1);
        let full = std::mem::take(&mut self.buf);
        self.ready.push(full);
        self.start_packet();
    }

    /// Sends the partly filled packet now (without EOM), for PRINT/RAISERROR WITH NOWAIT.
    pub fn flush_partial(&mut self) {
        if self.pending_len() > 0 {
            self.seal(status::NORMAL);
        }
    }

    /// Packets complete so far, in order.
    pub fn take_ready(&mut self) -> Vec<Vec<u8>> {
        std::mem::take(&mut self.ready)
    }

    /// Ends the message: the remaining packets, the last with EOM.
    pub fn finish(mut self) -> Vec<Vec<u8>> {
        self.seal(status::EOM);
        self.ready
    }
}

/// A whole message as one buffer of packets (used for short responses).
pub fn encode_message(ty: PacketType, spid: u16, packet_size: u32, payload: &[u8]) -> Vec<u8> {
    let mut w = PacketWriter::new(ty, spid, packet_size);
    w.write(payload);
    w.finish().concat()
}
