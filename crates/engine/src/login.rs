//! Logins: SQL authentication against password hashes stored in master (never the
//! password itself), and the `sa` password of a new instance.
//!
//! A password hash is PBKDF2-HMAC-SHA256 (RFC 8018) with a random 16-byte salt and
//! [`ITERATIONS`] iterations: deliberately slow, so a stolen master file does not give the
//! password away cheaply. HMAC-SHA256 (RFC 2104) is built here over the `sha2` crate; the
//! test vectors of RFC 4231 and RFC 7914 check both.
//!
//! Stored login row (value of key `L` + upper-cased login name in master's system table;
//! integers little-endian): `u8` version (2), `u8` algorithm (1 = PBKDF2-HMAC-SHA256),
//! `u32` iterations, `u8` salt length, salt, `u8` hash length, hash, `u16` name length,
//! the login name in UTF-8 as created; then (version 2) `i32` principal id, `u8` flags
//! (bit 0 disabled, bit 1 member of sysadmin, bit 2 password policy checked), `u16`
//! length and the default database name, `i64` create and `i64` modify time (ms since
//! 1970-01-01 UTC). A version 1 row (name and hash only) reads as principal 1 and
//! sysadmin when it is `sa`, else as an enabled plain login of principal 0.

use sha2::{Digest, Sha256};

/// PBKDF2 iterations for new hashes (OWASP's floor for PBKDF2-HMAC-SHA256 is 600,000 in
/// 2023; 100,000 keeps a login under ~50 ms on a small machine while costing an attacker
/// 100,000 HMACs per guess).
pub const ITERATIONS: u32 = 100_000;
const SALT_LEN: usize = 16;
const VERSION: u8 = 2;
const VERSION_1: u8 = 1;
const FLAG_DISABLED: u8 = 1;
const FLAG_SYSADMIN: u8 = 2;
const FLAG_POLICY: u8 = 4;
const ALG_PBKDF2_SHA256: u8 = 1;

/// HMAC-SHA256 with the key's inner and outer states computed once (PBKDF2 calls it
/// `iterations` times with the same key).
struct HmacSha256 {
    inner: Sha256,
    outer: Sha256,
}

impl HmacSha256 {
    fn new(key: &[u8]) -> HmacSha256 {
        let mut block = [0u8; 64];
        if key.len() > 64 {
            block[..32].copy_from_slice(&Sha256::digest(key));
        } else {
            block[..key.len()].copy_from_slice(key);
        }
        let mut ipad = [0x36u8; 64];
        let mut opad = [0x5cu8; 64];
        for i in 0..64 {
            ipad[i] ^= block[i];
            opad[i] ^= block[i];
        }
        let mut inner = Sha256::new();
        inner.update(ipad);
        let mut outer = Sha256::new();
        outer.update(opad);
        HmacSha256 { inner, outer }
    }

    fn mac(&self, parts: &[&[u8]]) -> [u8; 32] {
        let mut i = self.inner.clone();
        for p in parts {
            i.update(p);
        }
        let mut o = self.outer.clone();
        o.update(i.finalize());
        o.finalize().into()
    }
}

/// PBKDF2-HMAC-SHA256 with a 32-byte output (one block).
pub fn pbkdf2_sha256(password: &[u8], salt: &[u8], iterations: u32) -> [u8; 32] {
    let prf = HmacSha256::new(password);
    let mut u = prf.mac(&[salt, &1u32.to_be_bytes()]);
    let mut t = u;
    for _ in 1..iterations {
        u = prf.mac(&[&u]);
        for (a, b) in t.iter_mut().zip(u) {
            *a ^= b;
        }
    }
    t
}

/// Bytes from the operating system's random source.
pub fn random_bytes(n: usize) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut b = vec![0u8; n];
    std::fs::File::open("/dev/urandom")?.read_exact(&mut b)?;
    Ok(b)
}

/// A new strong password for `sa`: 20 random letters and digits and a symbol, with at
/// least one digit, one upper- and one lower-case letter (SQL Server's password policy
/// asks for three character classes).
pub fn generate_password() -> std::io::Result<String> {
    const ALPHABET: &[u8] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz23456789";
    loop {
        let bytes = random_bytes(20)?;
        // 57 symbols; the modulo bias (256 % 57) is immaterial for a 20-character password.
        let mut s: String = bytes.iter().map(|b| ALPHABET[*b as usize % ALPHABET.len()] as char).collect();
        let has = |f: fn(&char) -> bool| s.chars().any(|c| f(&c));
        if has(char::is_ascii_digit) && has(char::is_ascii_uppercase) && has(char::is_ascii_lowercase) {
            s.push('#');
            return Ok(s);
        }
    }
}

/// A stored login: name, password hash and its server-level properties.
#[derive(Clone, PartialEq, Eq)]
pub struct LoginRecord {
    pub name: String,
    pub iterations: u32,
    pub salt: Vec<u8>,
    pub hash: Vec<u8>,
    /// sys.server_principals.principal_id (sa is 1, others from 256 as in SQL Server).
    pub principal_id: i32,
    pub disabled: bool,
    /// Member of the sysadmin fixed server role.
    pub sysadmin: bool,
    pub policy_checked: bool,
    pub default_database: String,
    /// Milliseconds since 1970-01-01 UTC.
    pub create_ms: i64,
    pub modify_ms: i64,
}

impl std::fmt::Debug for LoginRecord {
    // Never print hash material.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoginRecord").field("name", &self.name).field("iterations", &self.iterations).finish()
    }
}

impl LoginRecord {
    /// Hashes `password` with a fresh salt.
    pub fn new(name: &str, password: &str) -> std::io::Result<LoginRecord> {
        let salt = random_bytes(SALT_LEN)?;
        let hash = pbkdf2_sha256(password.as_bytes(), &salt, ITERATIONS).to_vec();
        let now = now_ms();
        let sa = name.eq_ignore_ascii_case("sa");
        Ok(LoginRecord {
            name: name.to_string(),
            iterations: ITERATIONS,
            salt,
            hash,
            principal_id: if sa { 1 } else { 0 },
            disabled: false,
            sysadmin: sa,
            policy_checked: true,
            default_database: "master".to_string(),
            create_ms: now,
            modify_ms: now,
        })
    }

    /// Replaces the password hash (fresh salt), keeping every other property.
    pub fn set_password(&mut self, password: &str) -> std::io::Result<()> {
        let fresh = LoginRecord::new(&self.name, password)?;
        self.iterations = fresh.iterations;
        self.salt = fresh.salt;
        self.hash = fresh.hash;
        self.modify_ms = fresh.modify_ms;
        Ok(())
    }

    /// Whether `password` is this login's (constant-time comparison of the hashes).
    pub fn verify(&self, password: &str) -> bool {
        let h = pbkdf2_sha256(password.as_bytes(), &self.salt, self.iterations);
        h.len() == self.hash.len() && h.iter().zip(&self.hash).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
    }

    /// A fast fingerprint of a verified password (salted SHA-256), kept in memory only so
    /// that repeated logins do not pay PBKDF2 each time.
    pub fn fingerprint(&self, password: &str) -> [u8; 32] {
        let mut h = Sha256::new();
        h.update(&self.salt);
        h.update(password.as_bytes());
        h.update(&self.hash);
        h.finalize().into()
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut out = vec![VERSION, ALG_PBKDF2_SHA256];
        out.extend_from_slice(&self.iterations.to_le_bytes());
        out.push(self.salt.len() as u8);
        out.extend_from_slice(&self.salt);
        out.push(self.hash.len() as u8);
        out.extend_from_slice(&self.hash);
        let name = self.name.as_bytes();
        out.extend_from_slice(&(name.len().min(u16::MAX as usize) as u16).to_le_bytes());
        out.extend_from_slice(&name[..name.len().min(u16::MAX as usize)]);
        out.extend_from_slice(&self.principal_id.to_le_bytes());
        let mut flags = 0;
        if self.disabled {
            flags |= FLAG_DISABLED;
        }
        if self.sysadmin {
            flags |= FLAG_SYSADMIN;
        }
        if self.policy_checked {
            flags |= FLAG_POLICY;
        }
        out.push(flags);
        let db = self.default_database.as_bytes();
        let n = db.len().min(u16::MAX as usize);
        out.extend_from_slice(&(n as u16).to_le_bytes());
        out.extend_from_slice(&db[..n]);
        out.extend_from_slice(&self.create_ms.to_le_bytes());
        out.extend_from_slice(&self.modify_ms.to_le_bytes());
        out
    }

    pub fn decode(b: &[u8]) -> Option<LoginRecord> {
        let mut at = 0usize;
        let mut take = |n: usize| {
            let s = b.get(at..at.checked_add(n)?)?;
            at += n;
            Some(s)
        };
        let version = take(1)?[0];
        if (version != VERSION && version != VERSION_1) || take(1)? != [ALG_PBKDF2_SHA256] {
            return None;
        }
        let iterations = u32::from_le_bytes(take(4)?.try_into().ok()?);
        let n = take(1)?[0] as usize;
        let salt = take(n)?.to_vec();
        let n = take(1)?[0] as usize;
        let hash = take(n)?.to_vec();
        let n = u16::from_le_bytes(take(2)?.try_into().ok()?) as usize;
        let name = String::from_utf8(take(n)?.to_vec()).ok()?;
        let sa = name.eq_ignore_ascii_case("sa");
        let mut rec = LoginRecord {
            name,
            iterations,
            salt,
            hash,
            principal_id: if sa { 1 } else { 0 },
            disabled: false,
            sysadmin: sa,
            policy_checked: true,
            default_database: "master".to_string(),
            create_ms: 0,
            modify_ms: 0,
        };
        if version == VERSION {
            rec.principal_id = i32::from_le_bytes(take(4)?.try_into().ok()?);
            let flags = take(1)?[0];
            if flags & !(FLAG_DISABLED | FLAG_SYSADMIN | FLAG_POLICY) != 0 {
                return None;
            }
            rec.disabled = flags & FLAG_DISABLED != 0;
            rec.sysadmin = flags & FLAG_SYSADMIN != 0;
            rec.policy_checked = flags & FLAG_POLICY != 0;
            let n = u16::from_le_bytes(take(2)?.try_into().ok()?) as usize;
            rec.default_database = String::from_utf8(take(n)?.to_vec()).ok()?;
            rec.create_ms = i64::from_le_bytes(take(8)?.try_into().ok()?);
            rec.modify_ms = i64::from_le_bytes(take(8)?.try_into().ok()?);
        }
        if iterations == 0 || rec.hash.len() != 32 || at != b.len() {
            return None;
        }
        Some(rec)
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

/// SQL Server's password complexity rule under CHECK_POLICY = ON (as on Linux, where
/// there is no Windows policy to ask): at least 8 characters, from at least three of
/// upper-case letters, lower-case letters, digits and other characters.
pub fn password_is_complex(password: &str) -> bool {
    let classes = [
        password.chars().any(|c| c.is_uppercase()),
        password.chars().any(|c| c.is_lowercase()),
        password.chars().any(|c| c.is_ascii_digit()),
        password.chars().any(|c| !c.is_alphanumeric()),
    ];
    password.chars().count() >= 8 && classes.iter().filter(|&&b| b).count() >= 3
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }

    #[test]
    fn hmac_rfc4231_case_2() {
        let m = HmacSha256::new(b"Jefe").mac(&[b"what do ya want ", b"for nothing?"]);
        assert_eq!(hex(&m), "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
    }

    #[test]
    fn hmac_long_key_rfc4231_case_6() {
        let key = [0xaau8; 131];
        let m = HmacSha256::new(&key).mac(&[b"Test Using Larger Than Block-Size Key - Hash Key First"]);
        assert_eq!(hex(&m), "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
    }

    #[test]
    fn pbkdf2_vectors() {
        assert_eq!(
            hex(&pbkdf2_sha256(b"password", b"salt", 1)),
            "120fb6cffcf8b32c43e7225256c4f837a86548c92ccc35480805987cb70be17b"
        );
        assert_eq!(
            hex(&pbkdf2_sha256(b"password", b"salt", 2)),
            "ae4d0c95af6b46d32d0adff928f06dd02a303f8ef3c251dfd6e2d85a95474c43"
        );
        assert_eq!(
            hex(&pbkdf2_sha256(b"password", b"salt", 4096)),
            "c5e478d59288c841aa530db6845c4c8d962893a001ce4e11a4963873aa98134a"
        );
        // RFC 7914 section 11, first 32 bytes.
        assert_eq!(
            hex(&pbkdf2_sha256(b"passwd", b"salt", 1)),
            "55ac046e56e3089fec1691c22544b605f94185216dde0465e68b9d57c20dacbc"
        );
    }

    #[test]
    fn records_round_trip_and_verify() {
        let r = LoginRecord {
            name: "app".into(),
            iterations: 10,
            salt: vec![1; 16],
            hash: pbkdf2_sha256(b"Secret#1", &[1; 16], 10).to_vec(),
            principal_id: 257,
            disabled: true,
            sysadmin: false,
            policy_checked: false,
            default_database: "Sales".into(),
            create_ms: 1_700_000_000_000,
            modify_ms: 1_700_000_000_123,
        };
        let enc = r.encode();
        assert_eq!(LoginRecord::decode(&enc), Some(r.clone()));
        for cut in 0..enc.len() {
            assert!(LoginRecord::decode(&enc[..cut]).is_none());
        }
        // A version 1 row (sessions 1-2 wrote these for sa) still reads, as sysadmin.
        let mut v1 = vec![1u8, 1];
        v1.extend_from_slice(&10u32.to_le_bytes());
        v1.push(16);
        v1.extend_from_slice(&[1; 16]);
        v1.push(32);
        v1.extend_from_slice(&r.hash);
        v1.extend_from_slice(&2u16.to_le_bytes());
        v1.extend_from_slice(b"sa");
        let old = LoginRecord::decode(&v1).expect("version 1 decodes");
        assert!(old.sysadmin && !old.disabled && old.principal_id == 1 && old.verify("Secret#1"));
        // Unknown flag bits are corrupt.
        let mut bad = enc.clone();
        let flags_at = enc.len() - 16 - 2 - "Sales".len() - 1;
        bad[flags_at] |= 0x80;
        assert!(LoginRecord::decode(&bad).is_none());
        assert!(r.verify("Secret#1"));
        assert!(!r.verify("secret#1"));
        assert!(!format!("{r:?}").contains("hash"));
        let p = generate_password().unwrap();
        assert_eq!(p.len(), 21);
        assert_ne!(p, generate_password().unwrap());
    }

    #[test]
    fn password_complexity() {
        assert!(password_is_complex("Secret#1"));
        assert!(password_is_complex("abcDEF12"));
        assert!(!password_is_complex("Sh0rt!"));
        assert!(!password_is_complex("alllowercase1"));
        assert!(!password_is_complex("ALLUPPER!!"));
    }
}
