//! The catalog views: sys.objects, sys.columns and their kin (all_, system_), sys.tables,
//! sys.views, sys.procedures, sys.indexes, sys.types, sys.databases, sys.schemas and the
//! file views, computed in `exec/sysviews.rs`; the views over constraints, modules,
//! parameters, triggers, storage and configuration (sys.index_columns, sys.key_constraints,
//! sys.sql_modules, sys.parameters, sys.partitions, sys.configurations, ...), computed in
//! `exec/catalog_views.rs`; and sys.fn_helpcollations().

use super::object::{Access, Body, Columns, ObjectKind, Schema, SystemObject};
use crate::exec::catalog_views;

/// A public catalog view.
pub(super) const fn catalog(
    id: i32,
    schema: Schema,
    name: &'static str,
    columns: fn() -> Vec<crate::exec::plan::OutCol>,
    rows: super::object::RowsFn,
) -> SystemObject {
    SystemObject {
        id,
        schema,
        name,
        kind: ObjectKind::View,
        access: Access::Public,
        columns: Columns::Built(columns),
        params: &[],
        body: Body::Rows(rows),
    }
}

/// A view of `exec/sysviews.rs`.
macro_rules! sys_view {
    ($id:expr, $schema:ident, $name:expr, $kind:ident) => {
        $crate::system::catalog::catalog(
            $id,
            $crate::system::object::Schema::$schema,
            $name,
            || $crate::exec::sysviews::columns_of($crate::exec::sysviews::ViewKind::$kind),
            |cx, call| $crate::exec::sysviews::rows_needing($crate::exec::sysviews::ViewKind::$kind, call, cx),
        )
    };
}
pub(super) use sys_view;

/// A view of `exec/catalog_views.rs`.
macro_rules! catalog_view {
    ($id:expr, $schema:ident, $name:expr, $view:ident) => {
        $crate::system::catalog::catalog(
            $id,
            $crate::system::object::Schema::$schema,
            $name,
            || $crate::exec::catalog_views::columns($crate::exec::catalog_views::CatalogView::$view),
            |cx, call| $crate::exec::catalog_views::rows($crate::exec::catalog_views::CatalogView::$view, call.db, cx),
        )
    };
}
pub(super) use catalog_view;

pub(super) const OBJECTS: &[SystemObject] = &[
    sys_view!(-100, Sys, "databases", Databases),
    sys_view!(-101, Sys, "schemas", Schemas),
    sys_view!(-102, Sys, "objects", Objects),
    sys_view!(-103, Sys, "all_objects", AllObjects),
    sys_view!(-104, Sys, "system_objects", SystemObjects),
    sys_view!(-105, Sys, "tables", Tables),
    sys_view!(-106, Sys, "views", Views),
    sys_view!(-107, Sys, "procedures", Procedures),
    sys_view!(-108, Sys, "columns", Columns),
    sys_view!(-109, Sys, "all_columns", AllColumns),
    sys_view!(-110, Sys, "system_columns", SystemColumns),
    sys_view!(-111, Sys, "indexes", Indexes),
    sys_view!(-112, Sys, "types", Types),
    sys_view!(-113, Sys, "master_files", MasterFiles),
    sys_view!(-114, Sys, "database_files", DatabaseFiles),
    sys_view!(-173, Sys, "all_views", AllViews),
    sys_view!(-174, Sys, "system_views", SystemViews),
    sys_view!(-188, Sys, "table_types", TableTypes),
    catalog_view!(-143, Sys, "index_columns", IndexColumns),
    catalog_view!(-144, Sys, "key_constraints", KeyConstraints),
    catalog_view!(-145, Sys, "foreign_keys", ForeignKeys),
    catalog_view!(-146, Sys, "foreign_key_columns", ForeignKeyColumns),
    catalog_view!(-147, Sys, "check_constraints", CheckConstraints),
    catalog_view!(-148, Sys, "default_constraints", DefaultConstraints),
    catalog_view!(-149, Sys, "identity_columns", IdentityColumns),
    catalog_view!(-150, Sys, "computed_columns", ComputedColumns),
    catalog_view!(-151, Sys, "sql_modules", SqlModules),
    catalog_view!(-152, Sys, "all_sql_modules", AllSqlModules),
    catalog_view!(-153, Sys, "parameters", Parameters),
    catalog_view!(-196, Sys, "all_parameters", AllParameters),
    catalog_view!(-154, Sys, "partitions", Partitions),
    catalog_view!(-155, Sys, "data_spaces", DataSpaces),
    catalog_view!(-156, Sys, "filegroups", Filegroups),
    catalog_view!(-157, Sys, "stats", Stats),
    catalog_view!(-158, Sys, "stats_columns", StatsColumns),
    catalog_view!(-159, Sys, "triggers", Triggers),
    catalog_view!(-195, Sys, "trigger_events", TriggerEvents),
    catalog_view!(-160, Sys, "synonyms", Synonyms),
    catalog_view!(-183, Sys, "allocation_units", AllocationUnits),
    catalog_view!(-184, Sys, "sequences", Sequences),
    catalog_view!(-185, Sys, "configurations", Configurations),
    SystemObject {
        id: -182,
        schema: Schema::Sys,
        name: "fn_helpcollations",
        kind: ObjectKind::TableFunction,
        access: Access::Public,
        columns: Columns::Built(catalog_views::fn_helpcollations_columns),
        params: &[],
        body: Body::Rows(|_, _| Ok(catalog_views::fn_helpcollations())),
    },
];
