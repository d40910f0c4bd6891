//! TLS for TDS: certificates and the two ways TLS is carried.
//!
//! - TDS 7.x: after PRELOGIN, the TLS handshake records travel as the payload of PRELOGIN
//!   packets (type 0x12), one message per handshake flight. [`PreloginWrapped`] does
//!   that wrapping under tokio-rustls; once the handshake is done it is switched to
//!   pass-through and TLS records flow directly on the socket (ENCRYPT_ON/REQ), or the
//!   connection drops back to plain after the first LOGIN7 packet (ENCRYPT_OFF).
//! - TDS 8.0 (strict): the client starts TLS at once (ALPN "tds/8.0"); PRELOGIN and
//!   everything after travel inside it.
//!
//! Without a configured certificate, a self-signed one (CN/SAN "localhost" and the
//! machine's host name) is generated with rcgen into the certificate directory on first
//! start and reused afterwards, so clients that pin it keep working across restarts.

use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::packet::{status, PacketType, HEADER_LEN};

pub const GENERATED_CERT_FILE: &str = "mesquite-tds-cert.pem";
pub const GENERATED_KEY_FILE: &str = "mesquite-tds-key.pem";
pub const ALPN_TDS_8: &[u8] = b"tds/8.0";

fn other(e: impl std::fmt::Display) -> io::Error {
    io::Error::other(e.to_string())
}

/// The certificate chain and key: the configured PEM files, or the generated pair in
/// `cert_dir` (created on first use).
pub fn load_or_generate_cert(
    configured: Option<&(PathBuf, PathBuf)>,
    cert_dir: &Path,
) -> io::Result<(Vec<CertificateDer<'static>>, PrivateKeyDer<'static>)> {
    let (cert_path, key_path) = match configured {
        Some((c, k)) => (c.clone(), k.clone()),
        None => {
            let c = cert_dir.join(GENERATED_CERT_FILE);
            let k = cert_dir.join(GENERATED_KEY_FILE);
            if !c.exists() || !k.exists() {
                generate_self_signed(&c, &k)?;
            }
            (c, k)
        }
    };
    let certs = CertificateDer::pem_file_iter(&cert_path)
        .map_err(|e| other(format!("{}: {e}", cert_path.display())))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| other(format!("{}: {e}", cert_path.display())))?;
    if certs.is_empty() {
        return Err(other(format!("{}: no certificate found", cert_path.display())));
    }
    let key = PrivateKeyDer::from_pem_file(&key_path).map_err(|e| other(format!("{}: {e}", key_path.display())))?;
    Ok((certs, key))
}

fn generate_self_signed(cert_path: &Path, key_path: &Path) -> io::Result<()> {
    if let Some(dir) = cert_path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut names = vec!["localhost".to_string()];
    if let Ok(h) = std::fs::read_to_string("/etc/hostname") {
        let h = h.trim();
        if !h.is_empty() && h != "localhost" {
            names.push(h.to_string());
        }
    }
    let ck = rcgen::generate_simple_self_signed(names).map_err(other)?;
    write_private(key_path, ck.key_pair.serialize_pem().as_bytes())?;
    std::fs::write(cert_path, ck.cert.pem())?;
    Ok(())
}

/// Writes a key file readable by its owner only.
fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let mut opts = std::fs::OpenOptions::new();
    opts.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.mode(0o600);
    }
    opts.open(path)?.write_all(bytes)
}

/// A rustls server configuration (ring provider). TDS 8.0 (`strict`) offers TLS 1.2 and
/// 1.3 and the "tds/8.0" ALPN protocol; TLS inside PRELOGIN (TDS 7.x) is TLS 1.2 only, as
/// in SQL Server, which has TLS 1.3 only with TDS 8.0. Drivers are written for that:
/// mssql-jdbc offering 1.3 inside PRELOGIN loses its client Finished (the server then
/// fails the first record with bad_record_mac); offered 1.2, every driver uses it. Session tickets are off: a
/// TLS 1.3 ticket sent after the handshake would arrive while the client still expects
/// PRELOGIN-wrapped records.
pub fn server_config(
    certs: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
    strict: bool,
) -> io::Result<Arc<rustls::ServerConfig>> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let versions: &[&rustls::SupportedProtocolVersion] =
        if strict { rustls::DEFAULT_VERSIONS } else { &[&rustls::version::TLS12] };
    let mut cfg = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .map_err(other)?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(other)?;
    cfg.send_tls13_tickets = 0;
    if strict {
        cfg.alpn_protocols = vec![ALPN_TDS_8.to_vec()];
    }
    Ok(Arc::new(cfg))
}

/// A stream that, while `wrapping`, carries its bytes as the payload of TDS packets:
/// writes are collected and sent as one PRELOGIN message on flush (tokio-rustls flushes
/// after each handshake flight), reads strip packet headers. Used on both sides (the
/// test client wraps the same way).
#[derive(Debug)]
pub struct PreloginWrapped<S> {
    inner: S,
    wrapping: bool,
    hdr: [u8; HEADER_LEN],
    hdr_filled: usize,
    payload_left: usize,
    /// Raw bytes read while looking for a packet header after the switch to TLS records.
    leftover: Vec<u8>,
    out: Vec<u8>,
    sending: Vec<u8>,
    sent: usize,
}

impl<S> PreloginWrapped<S> {
    pub fn new(inner: S) -> PreloginWrapped<S> {
        PreloginWrapped {
            inner,
            wrapping: true,
            hdr: [0; HEADER_LEN],
            hdr_filled: 0,
            payload_left: 0,
            leftover: Vec::new(),
            out: Vec::new(),
            sending: Vec::new(),
            sent: 0,
        }
    }

    /// Ends the wrapping: from now on bytes pass straight through. (Reading switches by
    /// itself when a bare TLS record arrives instead of a packet.)
    pub fn set_passthrough(&mut self) {
        self.wrapping = false;
    }

    pub fn get_ref(&self) -> &S {
        &self.inner
    }

    pub fn into_inner(self) -> S {
        self.inner
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for PreloginWrapped<S> {
    fn poll_read(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if !this.leftover.is_empty() {
            let n = this.leftover.len().min(buf.remaining());
            buf.put_slice(&this.leftover[..n]);
            this.leftover.drain(..n);
            return Poll::Ready(Ok(()));
        }
        if !this.wrapping {
            return Pin::new(&mut this.inner).poll_read(cx, buf);
        }
        loop {
            if this.payload_left > 0 {
                let want = this.payload_left.min(buf.remaining());
                let mut tmp = vec![0u8; want];
                let mut rb = ReadBuf::new(&mut tmp);
                ready!(Pin::new(&mut this.inner).poll_read(cx, &mut rb))?;
                let n = rb.filled().len();
                if n == 0 {
                    return Poll::Ready(Err(io::ErrorKind::UnexpectedEof.into()));
                }
                this.payload_left -= n;
                buf.put_slice(&tmp[..n]);
                return Poll::Ready(Ok(()));
            }
            while this.hdr_filled < HEADER_LEN {
                let mut rb = ReadBuf::new(&mut this.hdr[this.hdr_filled..]);
                ready!(Pin::new(&mut this.inner).poll_read(cx, &mut rb))?;
                let n = rb.filled().len();
                if n == 0 {
                    if this.hdr_filled == 0 {
                        return Poll::Ready(Ok(())); // end of stream
                    }
                    return Poll::Ready(Err(io::ErrorKind::UnexpectedEof.into()));
                }
                this.hdr_filled += n;
                if (0x14..=0x17).contains(&this.hdr[0]) {
                    // A bare TLS record (change_cipher_spec, alert, handshake, application
                    // data), not a TDS packet: the peer finished its side of the handshake
                    // and sent its first encrypted data. tokio-rustls keeps reading after
                    // the last handshake message, so the switch must happen here.
                    this.wrapping = false;
                    let n = this.hdr_filled;
                    this.hdr_filled = 0;
                    this.leftover.extend_from_slice(&this.hdr[..n]);
                    return Pin::new(this).poll_read(cx, buf);
                }
            }
            this.hdr_filled = 0;
            let ty = this.hdr[0];
            if ty != PacketType::PreLogin as u8 && ty != PacketType::TabularResult as u8 {
                return Poll::Ready(Err(other(format!("packet type {ty:#04x} during the TLS handshake"))));
            }
            let len = usize::from(u16::from_be_bytes([this.hdr[2], this.hdr[3]]));
            if len < HEADER_LEN {
                return Poll::Ready(Err(other("packet length below 8 during the TLS handshake")));
            }
            this.payload_left = len - HEADER_LEN;
        }
    }
}

/// Payload per handshake packet: the pre-login packet size.
const HANDSHAKE_PAYLOAD: usize = 4096 - HEADER_LEN;

impl<S: AsyncWrite + Unpin> AsyncWrite for PreloginWrapped<S> {
    fn poll_write(mut self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = &mut *self;
        if !this.wrapping {
            return Pin::new(&mut this.inner).poll_write(cx, buf);
        }
        this.out.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.sending.is_empty() && !this.out.is_empty() {
            let chunks: Vec<&[u8]> = this.out.chunks(HANDSHAKE_PAYLOAD).collect();
            let last = chunks.len() - 1;
            for (i, c) in chunks.iter().enumerate() {
                let st = if i == last { status::EOM } else { status::NORMAL };
                let len = (c.len() + HEADER_LEN) as u16;
                let l = len.to_be_bytes();
                this.sending.extend_from_slice(&[PacketType::PreLogin as u8, st, l[0], l[1], 0, 0, (i + 1) as u8, 0]);
                this.sending.extend_from_slice(c);
            }
            this.out.clear();
            this.sent = 0;
        }
        while this.sent < this.sending.len() {
            let n = ready!(Pin::new(&mut this.inner).poll_write(cx, &this.sending[this.sent..]))?;
            if n == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            this.sent += n;
        }
        this.sending.clear();
        this.sent = 0;
        Pin::new(&mut this.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}
