//! Lock modes, SQL Server's lock compatibility matrix and the lock conversion rules.
//!
//! # The matrix and where it comes from
//!
//! [`MATRIX`] is SQL Server's "complete lock compatibility matrix" from the Transaction
//! Locking and Row Versioning Guide (the figure in "Lock compatibility"), rows = the
//! requested mode, columns = the existing granted mode, with the figure's three values:
//!
//! - `N` no conflict: the request can be granted alongside the existing lock;
//! - `C` conflict: the request waits;
//! - `I` illegal: the two modes never meet on one resource (schema, intent and bulk
//!   update locks are taken on tables, pages and databases; key-range locks only on
//!   keys). The lock manager treats `I` as a conflict, which is the safe reading.
//!
//! The guide's text tables (the "most commonly encountered" six modes, the key-range
//! table, and the Sch-S / Sch-M / BU rules) are copied by hand into
//! `tests/locks.rs` and checked cell by cell against [`MATRIX`]; the test also checks
//! every legal cell against the construction the figure follows (a mode is a coarse
//! S/U/X part plus an intent part, or a range part plus a key part; two modes are
//! compatible when every pair of parts is), so a typo in any cell fails.
//!
//! # Conversion
//!
//! A transaction that holds a lock and asks for another mode on the same resource gets
//! one lock in the least mode that covers both ([`LockMode::join`]): S + IX = SIX,
//! S + IU = SIU, U + IX = UIX, S + U = U, IS + X = X, and for key-range locks the
//! guide's conversion table: S + RangeI-N = RangeI-S, U + RangeI-N = RangeI-U,
//! X + RangeI-N = RangeI-X, RangeI-N + RangeS-S = RangeX-S,
//! RangeI-N + RangeS-U = RangeX-U. Sch-M absorbs everything; Sch-S is absorbed by
//! everything.

use std::fmt;

use diag::WaitType;

/// A lock mode, spelled as the locks DMV's request_mode spells it. The discriminant
/// is SQL Server's mode number (sys.syslockinfo.req_mode, the lock_acquired event's
/// `mode` map): 1 = Sch-S ... 21 = RangeX-X. (0 = NULL, a placeholder mode SQL Server
/// uses internally, is not a mode anyone requests here.)
#[allow(non_camel_case_types)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum LockMode {
    /// Schema stability: the schema can't change while held (compiling, reading).
    Sch_S = 1,
    /// Schema modification: DDL; conflicts with every mode.
    Sch_M = 2,
    /// Shared: reading.
    S = 3,
    /// Update: read with intent to update; converts to X. Only one U at a time.
    U = 4,
    /// Exclusive: writing.
    X = 5,
    /// Intent shared: S locks are held below.
    IS = 6,
    /// Intent update: U locks are held below.
    IU = 7,
    /// Intent exclusive: X locks are held below.
    IX = 8,
    /// Shared with intent update.
    SIU = 9,
    /// Shared with intent exclusive.
    SIX = 10,
    /// Update with intent exclusive.
    UIX = 11,
    /// Bulk update (bulk load with TABLOCK).
    BU = 12,
    /// Shared range, shared key: serializable range scan.
    RangeS_S = 13,
    /// Shared range, update key: serializable update scan.
    RangeS_U = 14,
    /// Insert range, null key: tests a range before inserting a key.
    RangeI_N = 15,
    /// Conversion of S + RangeI-N.
    RangeI_S = 16,
    /// Conversion of U + RangeI-N.
    RangeI_U = 17,
    /// Conversion of X + RangeI-N.
    RangeI_X = 18,
    /// Conversion of RangeI-N + RangeS-S.
    RangeX_S = 19,
    /// Conversion of RangeI-N + RangeS-U.
    RangeX_U = 20,
    /// Exclusive range, exclusive key: updating or deleting a key in a range.
    RangeX_X = 21,
}

/// What the matrix says about a requested mode against a granted mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Compatibility {
    /// `N` in the matrix: both can be held at once.
    NoConflict,
    /// `C`: the request must wait.
    Conflict,
    /// `I`: the two modes never meet on one resource (treated as a conflict).
    Illegal,
}

/// Number of lock modes.
pub const MODE_COUNT: usize = 21;

/// SQL Server's complete lock compatibility matrix. Row = requested mode, column =
/// granted mode, both in [`LockMode::ALL`] order. See the module documentation.
#[rustfmt::skip]
pub const MATRIX: [&str; MODE_COUNT] = [
//   granted:  Sch-S Sch-M  S  U  X   IS IU IX SIU SIX UIX BU  RS-S RS-U RI-N RI-S RI-U RI-X RX-S RX-U RX-X
    /* Sch-S  */ "N C  N N N  N N N N N N N  I I I I I I I I I",
    /* Sch-M  */ "C C  C C C  C C C C C C C  I I I I I I I I I",
    /* S      */ "N C  N N C  N N C N C C C  N N N N N C N N C",
    /* U      */ "N C  N C C  N C C C C C C  N C N N C C N C C",
    /* X      */ "N C  C C C  C C C C C C C  C C N C C C C C C",
    /* IS     */ "N C  N N C  N N N N N N C  I I I I I I I I I",
    /* IU     */ "N C  N C C  N N N N N C C  I I I I I I I I I",
    /* IX     */ "N C  C C C  N N N C C C C  I I I I I I I I I",
    /* SIU    */ "N C  N C C  N N C N C C C  I I I I I I I I I",
    /* SIX    */ "N C  C C C  N N C C C C C  I I I I I I I I I",
    /* UIX    */ "N C  C C C  N C C C C C C  I I I I I I I I I",
    /* BU     */ "N C  C C C  C C C C C C N  I I I I I I I I I",
    /* RS-S   */ "I I  N N C  I I I I I I I  N N C C C C C C C",
    /* RS-U   */ "I I  N C C  I I I I I I I  N C C C C C C C C",
    /* RI-N   */ "I I  N N N  I I I I I I I  C C N N N N C C C",
    /* RI-S   */ "I I  N N C  I I I I I I I  C C N N N C C C C",
    /* RI-U   */ "I I  N C C  I I I I I I I  C C N N C C C C C",
    /* RI-X   */ "I I  C C C  I I I I I I I  C C N C C C C C C",
    /* RX-S   */ "I I  N N C  I I I I I I I  C C C C C C C C C",
    /* RX-U   */ "I I  N C C  I I I I I I I  C C C C C C C C C",
    /* RX-X   */ "I I  C C C  I I I I I I I  C C C C C C C C C",
];

/// One row of [`MATRIX`] as bit sets: bit `g` of `COMPAT[r]` is set when requesting
/// mode `r` against granted mode `g` is `N`; of `ILLEGAL[r]`, when it is `I`.
struct Masks {
    compat: [u32; MODE_COUNT],
    illegal: [u32; MODE_COUNT],
}

/// Parses [`MATRIX`] at compile time; a malformed row is a compile error.
const fn parse_matrix() -> Masks {
    let mut compat = [0u32; MODE_COUNT];
    let mut illegal = [0u32; MODE_COUNT];
    let mut r = 0;
    while r < MODE_COUNT {
        let row = MATRIX[r].as_bytes();
        let mut g = 0;
        let mut i = 0;
        while i < row.len() {
            match row[i] {
                b'N' => {
                    compat[r] |= 1 << g;
                    g += 1;
                }
                b'C' => g += 1,
                b'I' => {
                    illegal[r] |= 1 << g;
                    g += 1;
                }
                b' ' => {}
                _ => panic!("lock compatibility matrix: unexpected character"),
            }
            i += 1;
        }
        if g != MODE_COUNT {
            panic!("lock compatibility matrix: a row does not have 21 cells");
        }
        r += 1;
    }
    Masks { compat, illegal }
}

const MASKS: Masks = parse_matrix();

impl LockMode {
    /// Every mode, in SQL Server's mode-number order (the matrix order).
    pub const ALL: [LockMode; MODE_COUNT] = [
        LockMode::Sch_S,
        LockMode::Sch_M,
        LockMode::S,
        LockMode::U,
        LockMode::X,
        LockMode::IS,
        LockMode::IU,
        LockMode::IX,
        LockMode::SIU,
        LockMode::SIX,
        LockMode::UIX,
        LockMode::BU,
        LockMode::RangeS_S,
        LockMode::RangeS_U,
        LockMode::RangeI_N,
        LockMode::RangeI_S,
        LockMode::RangeI_U,
        LockMode::RangeI_X,
        LockMode::RangeX_S,
        LockMode::RangeX_U,
        LockMode::RangeX_X,
    ];

    /// Position in [`LockMode::ALL`] and in the matrix.
    #[inline]
    pub const fn index(self) -> usize {
        self as usize - 1
    }

    /// SQL Server's mode number (1 = Sch-S ... 21 = RangeX-X).
    #[inline]
    pub const fn number(self) -> u8 {
        self as u8
    }

    /// The name the locks DMV's request_mode and the deadlock graph show.
    pub const fn name(self) -> &'static str {
        match self {
            LockMode::Sch_S => "Sch-S",
            LockMode::Sch_M => "Sch-M",
            LockMode::S => "S",
            LockMode::U => "U",
            LockMode::X => "X",
            LockMode::IS => "IS",
            LockMode::IU => "IU",
            LockMode::IX => "IX",
            LockMode::SIU => "SIU",
            LockMode::SIX => "SIX",
            LockMode::UIX => "UIX",
            LockMode::BU => "BU",
            LockMode::RangeS_S => "RangeS-S",
            LockMode::RangeS_U => "RangeS-U",
            LockMode::RangeI_N => "RangeI-N",
            LockMode::RangeI_S => "RangeI-S",
            LockMode::RangeI_U => "RangeI-U",
            LockMode::RangeI_X => "RangeI-X",
            LockMode::RangeX_S => "RangeX-S",
            LockMode::RangeX_U => "RangeX-U",
            LockMode::RangeX_X => "RangeX-X",
        }
    }

    /// Parses a mode name as [`LockMode::name`] prints it (case-insensitive; the
    /// underscore spellings `RangeS_S`, `Sch_S` are accepted too).
    pub fn from_name(name: &str) -> Option<LockMode> {
        let norm = name.replace('_', "-");
        LockMode::ALL.iter().copied().find(|m| m.name().eq_ignore_ascii_case(&norm))
    }

    /// The wait type a request in this mode records while it waits: LCK_M_ + the mode.
    pub const fn wait_type(self) -> WaitType {
        match self {
            LockMode::Sch_S => WaitType::LCK_M_SCH_S,
            LockMode::Sch_M => WaitType::LCK_M_SCH_M,
            LockMode::S => WaitType::LCK_M_S,
            LockMode::U => WaitType::LCK_M_U,
            LockMode::X => WaitType::LCK_M_X,
            LockMode::IS => WaitType::LCK_M_IS,
            LockMode::IU => WaitType::LCK_M_IU,
            LockMode::IX => WaitType::LCK_M_IX,
            LockMode::SIU => WaitType::LCK_M_SIU,
            LockMode::SIX => WaitType::LCK_M_SIX,
            LockMode::UIX => WaitType::LCK_M_UIX,
            LockMode::BU => WaitType::LCK_M_BU,
            LockMode::RangeS_S => WaitType::LCK_M_RS_S,
            LockMode::RangeS_U => WaitType::LCK_M_RS_U,
            LockMode::RangeI_N => WaitType::LCK_M_RIn_NL,
            LockMode::RangeI_S => WaitType::LCK_M_RIn_S,
            LockMode::RangeI_U => WaitType::LCK_M_RIn_U,
            LockMode::RangeI_X => WaitType::LCK_M_RIn_X,
            LockMode::RangeX_S => WaitType::LCK_M_RX_S,
            LockMode::RangeX_U => WaitType::LCK_M_RX_U,
            LockMode::RangeX_X => WaitType::LCK_M_RX_X,
        }
    }

    /// True for the key-range modes (RangeS-S ... RangeX-X).
    pub const fn is_key_range(self) -> bool {
        self as u8 >= LockMode::RangeS_S as u8
    }

    /// What the matrix says about requesting `self` while `granted` is held by another
    /// transaction.
    #[inline]
    pub const fn compatibility(self, granted: LockMode) -> Compatibility {
        let bit = 1u32 << granted.index();
        if MASKS.compat[self.index()] & bit != 0 {
            Compatibility::NoConflict
        } else if MASKS.illegal[self.index()] & bit != 0 {
            Compatibility::Illegal
        } else {
            Compatibility::Conflict
        }
    }

    /// Whether a request in mode `self` can be granted next to a lock granted in mode
    /// `granted` to another transaction (`I` cells count as conflicts).
    #[inline]
    pub const fn compatible(self, granted: LockMode) -> bool {
        MASKS.compat[self.index()] & (1u32 << granted.index()) != 0
    }

    /// The mode a lock converts to when its holder, holding `self`, requests `other`:
    /// the least mode that is at least as strong as both. See the module docs.
    pub const fn join(self, other: LockMode) -> LockMode {
        use LockMode::*;
        if self as u8 == other as u8 {
            return self;
        }
        match (self, other) {
            (Sch_M, _) | (_, Sch_M) => Sch_M,
            (Sch_S, m) | (m, Sch_S) => m,
            // BU conflicts with everything but Sch-S and BU; with anything else only X
            // (or a key-range mode's X) covers both.
            (BU, m) | (m, BU) => {
                if m.is_key_range() {
                    RangeX_X
                } else {
                    X
                }
            }
            (a, b) => match (a.table_parts(), b.table_parts()) {
                (Some(pa), Some(pb)) => from_table_parts(max(pa.0, pb.0), max(pa.1, pb.1)),
                _ => match (a.key_parts(), b.key_parts()) {
                    (Some(ka), Some(kb)) => from_key_parts(join_range(ka.0, kb.0), max(ka.1, kb.1)),
                    // An intent mode meeting a key-range mode: never happens on one
                    // resource; answer the mode that conflicts with both.
                    _ => RangeX_X,
                },
            },
        }
    }

    /// The mode as (coarse part, intent part), each 0 = none, 1 = S, 2 = U, 3 = X, for
    /// the table-level family S, U, X, IS, IU, IX, SIU, SIX, UIX.
    const fn table_parts(self) -> Option<(u8, u8)> {
        use LockMode::*;
        Some(match self {
            S => (1, 0),
            U => (2, 0),
            X => (3, 0),
            IS => (0, 1),
            IU => (0, 2),
            IX => (0, 3),
            SIU => (1, 2),
            SIX => (1, 3),
            UIX => (2, 3),
            _ => return None,
        })
    }

    /// The mode as (range part, key part) for the key family S, U, X and the key-range
    /// modes. Range part: 0 = none, 1 = RangeS, 2 = RangeI, 3 = RangeX; key part:
    /// 0 = N (null), 1 = S, 2 = U, 3 = X.
    const fn key_parts(self) -> Option<(u8, u8)> {
        use LockMode::*;
        Some(match self {
            S => (0, 1),
            U => (0, 2),
            X => (0, 3),
            RangeS_S => (1, 1),
            RangeS_U => (1, 2),
            RangeI_N => (2, 0),
            RangeI_S => (2, 1),
            RangeI_U => (2, 2),
            RangeI_X => (2, 3),
            RangeX_S => (3, 1),
            RangeX_U => (3, 2),
            RangeX_X => (3, 3),
            _ => return None,
        })
    }
}

const fn max(a: u8, b: u8) -> u8 {
    if a > b {
        a
    } else {
        b
    }
}

/// RangeS + RangeI = RangeX; RangeX absorbs both.
const fn join_range(a: u8, b: u8) -> u8 {
    if a == b {
        a
    } else if a == 0 {
        b
    } else if b == 0 {
        a
    } else {
        3
    }
}

const fn from_table_parts(coarse: u8, intent: u8) -> LockMode {
    use LockMode::*;
    // An intent no stronger than the coarse part adds nothing (S covers IS, U covers
    // IU and IS, X covers all).
    let intent = if intent <= coarse { 0 } else { intent };
    match (coarse, intent) {
        (0, 1) => IS,
        (0, 2) => IU,
        (0, 3) => IX,
        (1, 0) => S,
        (1, 2) => SIU,
        (1, 3) => SIX,
        (2, 0) => U,
        (2, 3) => UIX,
        _ => X,
    }
}

const fn from_key_parts(range: u8, key: u8) -> LockMode {
    use LockMode::*;
    match (range, key) {
        (0, 1) => S,
        (0, 2) => U,
        (0, 3) => X,
        (1, 0) | (1, 1) => RangeS_S,
        (1, 2) => RangeS_U,
        // No RangeS-X exists: RangeS with an X key needs RangeX-X to keep out inserts.
        (1, 3) => RangeX_X,
        (2, 0) => RangeI_N,
        (2, 1) => RangeI_S,
        (2, 2) => RangeI_U,
        (2, 3) => RangeI_X,
        (3, 0) | (3, 1) => RangeX_S,
        (3, 2) => RangeX_U,
        _ => RangeX_X,
    }
}

impl fmt::Display for LockMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_numbers_and_wait_types() {
        for (i, m) in LockMode::ALL.iter().enumerate() {
            assert_eq!(m.index(), i);
            assert_eq!(m.number() as usize, i + 1);
            assert_eq!(LockMode::from_name(m.name()), Some(*m));
            let wt = m.wait_type().name();
            assert!(wt.starts_with("LCK_M_"), "{wt}");
        }
        assert_eq!(LockMode::from_name("RangeS_S"), Some(LockMode::RangeS_S));
        assert_eq!(LockMode::from_name("sch-m"), Some(LockMode::Sch_M));
        assert_eq!(LockMode::RangeI_N.wait_type(), WaitType::LCK_M_RIn_NL);
        assert_eq!(LockMode::RangeX_U.wait_type(), WaitType::LCK_M_RX_U);
        assert_eq!(LockMode::Sch_S.wait_type(), WaitType::LCK_M_SCH_S);
    }

    #[test]
    fn documented_conversions() {
        use LockMode::*;
        let cases = [
            (S, IX, SIX),
            (IX, S, SIX),
            (S, IU, SIU),
            (U, IX, UIX),
            (IS, S, S),
            (IS, IX, IX),
            (S, U, U),
            (U, X, X),
            (SIU, IX, SIX),
            (SIX, U, UIX),
            (UIX, S, UIX),
            (IS, X, X),
            (S, RangeI_N, RangeI_S),
            (U, RangeI_N, RangeI_U),
            (X, RangeI_N, RangeI_X),
            (RangeI_N, RangeS_S, RangeX_S),
            (RangeI_N, RangeS_U, RangeX_U),
            (RangeS_S, X, RangeX_X),
            (RangeS_S, U, RangeS_U),
            (Sch_S, IX, IX),
            (Sch_M, IS, Sch_M),
            (BU, IS, X),
            (BU, Sch_S, BU),
        ];
        for (held, req, want) in cases {
            assert_eq!(held.join(req), want, "{held} + {req}");
        }
    }

    #[test]
    fn conversion_result_conflicts_with_whatever_either_part_did() {
        // Soundness: holding join(a, b) must keep out every request that a or b kept
        // out, in both directions (cells marked I are don't-cares), and join is commutative, idempotent and at least as
        // strong as both inputs.
        for a in LockMode::ALL {
            for b in LockMode::ALL {
                let j = a.join(b);
                assert_eq!(j, b.join(a), "{a} + {b}");
                assert_eq!(j.join(a), j);
                assert_eq!(j.join(b), j);
                // Only real conflicts count: `I` pairs never meet on one resource.
                let conflict = |x: LockMode, y: LockMode| x.compatibility(y) == Compatibility::Conflict;
                for m in LockMode::ALL {
                    if conflict(m, a) || conflict(m, b) {
                        assert!(!m.compatible(j), "{m} vs {a}+{b}={j}");
                    }
                    if conflict(a, m) || conflict(b, m) {
                        assert!(!j.compatible(m), "{a}+{b}={j} vs {m}");
                    }
                }
            }
        }
    }
}
