//! The INFORMATION_SCHEMA views: TABLES, COLUMNS and VIEWS (computed in
//! `exec/sysviews.rs`), SCHEMATA, ROUTINES, PARAMETERS and the constraint views (computed
//! in `exec/catalog_views.rs`).

use super::catalog::{catalog_view, sys_view};
use super::object::SystemObject;

pub(super) const OBJECTS: &[SystemObject] = &[
    sys_view!(-127, InformationSchema, "TABLES", IsTables),
    sys_view!(-128, InformationSchema, "COLUMNS", IsColumns),
    sys_view!(-129, InformationSchema, "VIEWS", IsViews),
    catalog_view!(-161, InformationSchema, "SCHEMATA", IsSchemata),
    catalog_view!(-162, InformationSchema, "ROUTINES", IsRoutines),
    catalog_view!(-163, InformationSchema, "PARAMETERS", IsParameters),
    catalog_view!(-164, InformationSchema, "TABLE_CONSTRAINTS", IsTableConstraints),
    catalog_view!(-165, InformationSchema, "KEY_COLUMN_USAGE", IsKeyColumnUsage),
    catalog_view!(-166, InformationSchema, "REFERENTIAL_CONSTRAINTS", IsReferentialConstraints),
    catalog_view!(-167, InformationSchema, "CHECK_CONSTRAINTS", IsCheckConstraints),
    catalog_view!(-168, InformationSchema, "CONSTRAINT_COLUMN_USAGE", IsConstraintColumnUsage),
    catalog_view!(-169, InformationSchema, "CONSTRAINT_TABLE_USAGE", IsConstraintTableUsage),
];
