//! DBCC's engine side: the consistency checks DBCC CHECKDB runs over a database's
//! storage (the executor parses the command, checks permissions and reports). Today the
//! structural core: allocation, every B-tree, and each LOB unit against the pointers
//! that reach it; the logical checks, repair options and CHECKTABLE/CHECKALLOC
//! variants will live here too.

use std::ops::Bound;

use sql::host::DbId;
use storage::btree::{BTree, BTreeOptions};

use crate::error::Result;
use crate::instance::{DbHandle, Instance};
use crate::rows::RowCodec;

impl Instance {
    /// DBCC CHECKDB's structural core (see [`sql::host::InstanceAdmin::check_database`]): the
    /// allocation cross-check, then every B-tree the database has (system table,
    /// catalog, and each index of each table in the catalog). Meant for a quiet
    /// database: trees changing under the check can be reported as damaged.
    /// Each LOB allocation unit is checked against the off-row pointers of its index's
    /// rows: every value's tree is sound and no record on the unit's pages is an orphan
    /// (a value nobody points at: leaked storage).
    pub fn check_database(&self, id: DbId) -> Result<Vec<String>> {
        let h = self.db(id)?;
        let mut problems = h.txn.db.check_allocation()?;
        let mut hobts = vec![("system table".to_string(), h.system_hobt(), None)];
        hobts.push(("catalog".to_string(), h.catalog_hobt, None));
        for o in h.catalog.inner.read().objects.values() {
            if let Some(t) = o.table() {
                for i in &t.indexes {
                    let columns = if i.index_id <= 1 {
                        sql::exec::stored_columns(&t.columns)
                    } else {
                        let keys = t.column_positions(i.key_columns.iter().map(|(c, _)| *c));
                        let included = t.column_positions(i.included.iter().copied());
                        match (keys, included) {
                            (Ok(k), Ok(inc)) => sql::exec::nc_stored_columns(&t.columns, &k, &inc),
                            _ => Vec::new(),
                        }
                    };
                    hobts.push((format!("{} (index id {})", o.name, i.index_id), i.hobt, Some(columns)));
                }
            }
        }
        for (what, hobt, columns) in hobts {
            let checked = BTree::open(&h.txn.db, hobt, BTreeOptions { unique: true }).and_then(|t| t.check());
            if let Err(e) = checked {
                problems.push(format!("{what}, HoBT {hobt}: {e}"));
                continue;
            }
            let (Some(columns), Some(unit)) = (columns, h.lob_unit(hobt)?) else { continue };
            if let Err(e) = check_lob_unit(&h, hobt, unit, columns) {
                problems.push(format!("{what}, LOB allocation unit {unit}: {e}"));
            }
        }
        Ok(problems)
    }
}

/// Checks an index's LOB unit against the pointers its rows hold (`storage::lob::check_unit`).
fn check_lob_unit(h: &DbHandle, hobt: u64, unit: u64, columns: Vec<sql::host::StoredColumn>) -> Result<()> {
    let codec = RowCodec::new(columns.into())?;
    let tree = BTree::open(&h.txn.db, hobt, BTreeOptions { unique: true })?;
    let mut ptrs = Vec::new();
    let mut bad = None;
    tree.scan(Bound::Unbounded, Bound::Unbounded, |_, row| match codec.lob_pointers(row) {
        Ok(p) => {
            ptrs.extend(p);
            true
        }
        Err(e) => {
            bad = Some(e);
            false
        }
    })?;
    if let Some(e) = bad {
        return Err(e);
    }
    storage::lob::check_unit(&h.txn.db, unit, ptrs)?;
    Ok(())
}
