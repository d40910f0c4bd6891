//! Property tests of the FixedVar row format (`storage::record`): random layouts and values
//! round-trip byte for byte, NULLs cost what SQL Server's format says they cost, the off-row
//! planner always produces a row that fits, and no input bytes, random or damaged, make the
//! decoder panic.

// Inside `mod record` so the `record::` test filter selects these too.
mod record {
    use proptest::prelude::*;
    use storage::record::{
        clear_ghost, decode_forwarding_stub, encode_forwarded_record, encode_record, encoded_len, plan_off_row,
        record_length, record_type, set_ghost, to_forwarded_record, to_primary_record, ColumnLayout, ColumnValue,
        LobPointer, RecordError, RecordType, RecordView, Rid, RowLayout, LOB_POINTER_LEN, MAX_INLINE_VALUE,
        MAX_IN_ROW_RECORD, MAX_RECORD_LEN,
    };

    /// An owned column value, so strategies can generate them.
    #[derive(Debug, Clone, PartialEq)]
    enum Val {
        Null,
        Bytes(Vec<u8>),
        Lob(LobPointer),
    }

    impl Val {
        fn as_value(&self) -> ColumnValue<'_> {
            match self {
                Val::Null => ColumnValue::Null,
                Val::Bytes(b) => ColumnValue::Inline(b),
                Val::Lob(p) => ColumnValue::Lob(*p),
            }
        }
    }

    fn values_of(vals: &[Val]) -> Vec<ColumnValue<'_>> {
        vals.iter().map(Val::as_value).collect()
    }

    fn rid() -> impl Strategy<Value = Rid> {
        (any::<u16>(), any::<u32>(), any::<u16>()).prop_map(|(file_id, page_no, slot)| Rid { file_id, page_no, slot })
    }

    fn column() -> impl Strategy<Value = ColumnLayout> {
        let base = prop_oneof![
            4 => (1u16..=16).prop_map(ColumnLayout::fixed),
            1 => (17u16..=100).prop_map(ColumnLayout::fixed),
            4 => Just(ColumnLayout::variable()),
            2 => Just(ColumnLayout::lob()),
        ];
        (base, any::<bool>(), 0u8..4).prop_map(|(c, nullable, sparse)| {
            let c = if nullable { c.with_nullable() } else { c };
            // One column in four is sparse.
            if sparse == 0 {
                c.with_sparse()
            } else {
                c
            }
        })
    }

    fn layout() -> impl Strategy<Value = RowLayout> {
        prop::collection::vec(column(), 1..=40)
            .prop_map(|cols| RowLayout::new(cols).expect("at most 40 columns of at most 100 fixed bytes always fit"))
    }

    fn var_bytes() -> impl Strategy<Value = Vec<u8>> {
        prop_oneof![
            8 => prop::collection::vec(any::<u8>(), 0..=48),
            1 => prop::collection::vec(any::<u8>(), 0..=3000),
        ]
    }

    fn value_for(c: ColumnLayout) -> BoxedStrategy<Val> {
        let present: BoxedStrategy<Val> = match (c.fixed_len, c.lob) {
            (Some(n), _) => prop::collection::vec(any::<u8>(), usize::from(n)).prop_map(Val::Bytes).boxed(),
            (None, false) => var_bytes().prop_map(Val::Bytes).boxed(),
            (None, true) => prop_oneof![
                var_bytes().prop_map(Val::Bytes),
                (any::<u32>(), rid()).prop_map(|(len, root)| Val::Lob(LobPointer { total_len: u64::from(len), root })),
            ]
            .boxed(),
        };
        match (c.nullable, c.sparse) {
            (false, _) => present,
            // Sparse columns are mostly NULL: that is what they are for.
            (true, true) => prop_oneof![3 => Just(Val::Null), 2 => present].boxed(),
            (true, false) => prop_oneof![1 => Just(Val::Null), 2 => present].boxed(),
        }
    }

    fn layout_and_values() -> impl Strategy<Value = (RowLayout, Vec<Val>)> {
        layout().prop_flat_map(|l| {
            let vals: Vec<_> = l.columns().iter().map(|&c| value_for(c)).collect();
            (Just(l), vals)
        })
    }

    fn record_types() -> impl Strategy<Value = RecordType> {
        prop_oneof![
            Just(RecordType::Primary),
            Just(RecordType::Forwarded),
            Just(RecordType::Index),
            Just(RecordType::BlobFragment),
            Just(RecordType::GhostIndex),
            Just(RecordType::GhostData),
        ]
    }

    fn encode(l: &RowLayout, rtype: RecordType, vals: &[Val], back: Rid) -> Result<Vec<u8>, RecordError> {
        let mut out = Vec::new();
        if rtype == RecordType::Forwarded {
            encode_forwarded_record(l, &values_of(vals), back, &mut out)?;
        } else {
            encode_record(l, rtype, &values_of(vals), &mut out)?;
        }
        Ok(out)
    }

    /// Runs every decoding entry point over `bytes`; returns whether the record fully checked.
    /// The point is that none of them panics, whatever the bytes.
    fn exercise_decoder(l: &RowLayout, bytes: &[u8]) -> bool {
        let _ = record_type(bytes);
        let _ = record_length(bytes);
        let _ = decode_forwarding_stub(bytes);
        let mut copy = bytes.to_vec();
        let _ = set_ghost(&mut copy);
        let _ = clear_ghost(&mut copy);
        let _ = to_forwarded_record(l, bytes, Rid::default(), &mut Vec::new());
        let _ = to_primary_record(l, bytes, &mut Vec::new());
        if let Ok(view) = RecordView::parse_prefix(l, bytes) {
            for i in 0..l.column_count() + 2 {
                let _ = view.column(i);
                let _ = view.is_null(i);
            }
        }
        match RecordView::parse(l, bytes) {
            Ok(view) => {
                let _ = view.back_pointer();
                let mut all = true;
                for i in 0..l.column_count() + 2 {
                    all &= view.column(i).is_ok() || i >= l.column_count();
                    let _ = view.is_null(i);
                }
                view.check().is_ok() && all
            }
            Err(_) => false,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

        /// Encode, decode, compare every column.
        #[test]
        fn round_trip((l, vals) in layout_and_values(), rtype in record_types(), back in rid()) {
            let values = values_of(&vals);
            match encode(&l, rtype, &vals, back) {
                Ok(rec) => {
                    prop_assert_eq!(encoded_len(&l, rtype, &values), Ok(rec.len()));
                    prop_assert_eq!(record_length(&rec), Ok(rec.len()));
                    prop_assert_eq!(record_type(&rec), Ok(rtype));
                    let limit = if rtype == RecordType::Forwarded { MAX_RECORD_LEN } else { MAX_IN_ROW_RECORD };
                    prop_assert!(rec.len() <= limit);
                    let view = RecordView::parse(&l, &rec).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    prop_assert_eq!(view.check(), Ok(()));
                    prop_assert_eq!(view.record_type(), rtype);
                    prop_assert_eq!(view.stored_columns(), l.column_count());
                    prop_assert_eq!(view.back_pointer(), (rtype == RecordType::Forwarded).then_some(back));
                    for (i, v) in values.iter().enumerate() {
                        prop_assert_eq!(view.column(i), Ok(*v), "column {}", i);
                        prop_assert_eq!(view.is_null(i), Ok(v.is_null()));
                    }
                    prop_assert!(view.column(l.column_count()).is_err());
                    // Whatever the type, the bytes after the status byte are the same.
                    let primary = encode(&l, RecordType::Primary, &vals, back).map_err(|e| TestCaseError::fail(e.to_string()))?;
                    if rtype == RecordType::Forwarded {
                        let mut unforwarded = Vec::new();
                        prop_assert_eq!(to_primary_record(&l, &rec, &mut unforwarded), Ok(()));
                        prop_assert_eq!(&unforwarded, &primary);
                        let mut forwarded = Vec::new();
                        prop_assert_eq!(to_forwarded_record(&l, &primary, back, &mut forwarded), Ok(()));
                        prop_assert_eq!(&forwarded, &rec);
                    } else {
                        prop_assert_eq!(&rec[1..], &primary[1..]);
                    }
                }
                Err(RecordError::RowTooLarge { size }) => {
                    prop_assert!(size > MAX_IN_ROW_RECORD);
                    prop_assert_eq!(encoded_len(&l, rtype, &values), Err(RecordError::RowTooLarge { size }));
                }
                Err(e) => prop_assert!(false, "unexpected error {}", e),
            }
        }

        /// Setting a non-NULL variable-length or sparse value to NULL always shortens the record
        /// by at least the value plus its bookkeeping; a fixed column keeps its space.
        #[test]
        fn nulls_cost_what_they_should((l, vals) in layout_and_values(), pick in any::<prop::sample::Index>()) {
            let Ok(before) = encode(&l, RecordType::Primary, &vals, Rid::default()) else { return Ok(()) };
            let i = pick.index(vals.len());
            let c = l.columns()[i];
            if !c.nullable || vals[i] == Val::Null {
                return Ok(());
            }
            let stored = match &vals[i] {
                Val::Bytes(b) => b.len(),
                Val::Lob(_) => LOB_POINTER_LEN,
                Val::Null => 0,
            };
            let mut nulled = vals.clone();
            nulled[i] = Val::Null;
            let after = encode(&l, RecordType::Primary, &nulled, Rid::default()).map_err(|e| TestCaseError::fail(e.to_string()))?;
            if c.sparse {
                // Value, column id and offset entry at least.
                prop_assert!(before.len() >= after.len() + stored + 4);
            } else if c.fixed_len.is_some() {
                prop_assert_eq!(before.len(), after.len());
            } else {
                let last_stored = l.var_columns().iter().rposition(|&v| vals[usize::from(v)] != Val::Null);
                let is_last = last_stored.map(|k| usize::from(l.var_columns()[k])) == Some(i);
                if is_last {
                    // A trailing NULL is not stored at all: its offset entry goes too.
                    prop_assert!(before.len() >= after.len() + stored + 2);
                } else {
                    prop_assert_eq!(before.len(), after.len() + stored);
                }
            }
        }

        /// NULL sparse columns take no space: a row whose sparse columns are all NULL is as long
        /// as the same row in a layout without them, but for the wider null bitmap and the
        /// larger column count.
        #[test]
        fn sparse_nulls_are_free((l, vals) in layout_and_values()) {
            let mut all_null = vals.clone();
            for &s in l.sparse_columns() {
                all_null[usize::from(s)] = Val::Null;
            }
            let Ok(with) = encode(&l, RecordType::Primary, &all_null, Rid::default()) else { return Ok(()) };
            let keep: Vec<usize> = (0..l.column_count()).filter(|&i| !l.columns()[i].sparse).collect();
            if keep.is_empty() {
                prop_assert_eq!(with.len(), 4 + 2);
                return Ok(());
            }
            let dense = RowLayout::new(keep.iter().map(|&i| l.columns()[i]).collect()).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let dense_vals: Vec<Val> = keep.iter().map(|&i| all_null[i].clone()).collect();
            let without = encode(&dense, RecordType::Primary, &dense_vals, Rid::default()).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let bitmap = |l: &RowLayout| if l.has_null_bitmap() { l.column_count().div_ceil(8) } else { 0 };
            prop_assert_eq!(with.len() - bitmap(&l), without.len() - bitmap(&dense));
        }

        /// The off-row planner's answer always encodes; when it gives up, nothing would fit.
        #[test]
        fn off_row_plan_fits(
            l in layout(),
            lens in prop::collection::vec(prop_oneof![3 => Just(None), 4 => (0usize..200).prop_map(Some), 2 => (0usize..9000).prop_map(Some), 1 => (8000usize..30000).prop_map(Some)], 40),
        ) {
            let lens: Vec<Option<usize>> = l
                .columns()
                .iter()
                .zip(&lens)
                .map(|(c, len)| match (c.nullable, c.fixed_len, *len) {
                    (true, _, None) => None,
                    (_, Some(n), _) => Some(usize::from(n)),
                    (_, None, len) => Some(len.unwrap_or(0)),
                })
                .collect();
            let root = Rid { file_id: 1, page_no: 99, slot: 0 };
            let build = |off: &[bool]| -> Vec<Val> {
                lens.iter()
                    .zip(off)
                    .map(|(len, &off)| match (len, off) {
                        (None, _) => Val::Null,
                        (Some(n), true) => Val::Lob(LobPointer { total_len: *n as u64, root }),
                        (Some(n), false) => Val::Bytes(vec![0x5A; *n]),
                    })
                    .collect()
            };
            match plan_off_row(&l, &lens) {
                Ok(off) => {
                    prop_assert_eq!(off.len(), l.column_count());
                    for (i, &o) in off.iter().enumerate() {
                        let c = l.columns()[i];
                        prop_assert!(!o || c.lob, "column {} cannot go off-row", i);
                        if let Some(n) = lens[i] {
                            prop_assert!(o || c.fixed_len.is_some() || n <= MAX_INLINE_VALUE);
                        }
                    }
                    let rec = encode(&l, RecordType::Primary, &build(&off), root);
                    prop_assert!(rec.is_ok(), "{:?}", rec.err());
                }
                Err(RecordError::RowTooLarge { size }) => {
                    prop_assert!(size > MAX_IN_ROW_RECORD);
                    let all_off: Vec<bool> = l.columns().iter().zip(&lens).map(|(c, len)| c.lob && len.is_some_and(|n| n > LOB_POINTER_LEN)).collect();
                    let best = encode(&l, RecordType::Primary, &build(&all_off), root);
                    let too_large = matches!(best, Err(RecordError::RowTooLarge { .. }));
                    prop_assert!(too_large, "moving every movable value would fit: {:?}", best);
                }
                Err(RecordError::ValueTooLong { column, len }) => {
                    prop_assert!(!l.columns()[column].lob && len > MAX_INLINE_VALUE);
                }
                Err(e) => prop_assert!(false, "unexpected error {}", e),
            }
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

        /// Random bytes never make the decoder panic.
        #[test]
        fn random_bytes_never_panic(l in layout(), bytes in prop::collection::vec(any::<u8>(), 0..160)) {
            exercise_decoder(&l, &bytes);
        }

        /// Random bytes behind a plausible header never make the decoder panic. The header is
        /// built to pass the first checks so the fuzzing reaches the offset arrays.
        #[test]
        fn plausible_headers_never_panic(
            l in layout(),
            status in prop::sample::select(vec![0x00u8, 0x10, 0x20, 0x30, 0x32, 0x36, 0x3C, 0x04]),
            status_b in prop::sample::select(vec![0u8, 1]),
            tail in prop::collection::vec(any::<u8>(), 0..200),
        ) {
            let mut bytes = vec![status, status_b];
            let fixed_end = l.fixed_end() as u16;
            bytes.extend_from_slice(&fixed_end.to_le_bytes());
            bytes.resize(usize::from(fixed_end), 0);
            bytes.extend_from_slice(&(l.column_count() as u16).to_le_bytes());
            bytes.extend_from_slice(&tail);
            exercise_decoder(&l, &bytes);
        }

        /// Damaged valid records (bytes changed, cut, or inserted) never make the decoder panic;
        /// one that still passes every check holds values that encode again to a record with the
        /// same values.
        #[test]
        fn damaged_records_never_panic(
            (l, vals) in layout_and_values(),
            rtype in record_types(),
            back in rid(),
            edits in prop::collection::vec((0u8..4, any::<prop::sample::Index>(), any::<u8>()), 1..4),
        ) {
            let Ok(mut rec) = encode(&l, rtype, &vals, back) else { return Ok(()) };
            for (kind, at, byte) in edits {
                if rec.is_empty() {
                    break;
                }
                let i = at.index(rec.len());
                match kind {
                    0 => rec[i] = byte,
                    1 => rec[i] ^= 1 << (byte % 8),
                    2 => rec.truncate(i),
                    _ => rec.insert(i, byte),
                }
            }
            if !exercise_decoder(&l, &rec) {
                return Ok(());
            }
            let view = RecordView::parse(&l, &rec).map_err(|e| TestCaseError::fail(e.to_string()))?;
            if view.stored_columns() != l.column_count() {
                return Ok(());
            }
            let decoded: Vec<ColumnValue> = view.columns().collect::<Result<_, _>>().map_err(|e| TestCaseError::fail(e.to_string()))?;
            let mut again = Vec::new();
            let res = match (view.record_type(), view.back_pointer()) {
                (RecordType::Forwarded, Some(b)) => encode_forwarded_record(&l, &decoded, b, &mut again),
                (t, _) => encode_record(&l, t, &decoded, &mut again),
            };
            prop_assert_eq!(res, Ok(()));
            let view2 = RecordView::parse(&l, &again).map_err(|e| TestCaseError::fail(e.to_string()))?;
            for (i, v) in decoded.iter().enumerate() {
                prop_assert_eq!(view2.column(i), Ok(*v));
            }
        }
    }
}
