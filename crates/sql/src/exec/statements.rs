//! What the executor needs to know of each kind of statement, in one table
//! ([`props`]): whether it reads or writes tables (and so runs in a transaction, or
//! under a savepoint in an explicit one), whether it begins a transaction under SET
//! IMPLICIT_TRANSACTIONS ON, whether it sets @@ERROR to 0 when it succeeds, the command
//! code of its DONE token, and the command sys.dm_exec_requests shows while it runs.

use crate::ast::*;
use crate::results::command_code as c;

/// One statement's properties (see the module doc).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StatementProps {
    /// Reads or writes tables: runs atomically (autocommit transaction or savepoint).
    pub data: bool,
    /// Begins a transaction under SET IMPLICIT_TRANSACTIONS ON (SQL Server's list: DDL,
    /// DML, GRANT/REVOKE/DENY, BEGIN TRANSACTION, and a SELECT that reads a table).
    pub implicit_transaction: bool,
    /// Sets @@ERROR to 0 when it succeeds (control flow keeps it).
    pub resets_error: bool,
    /// The DONE token's command code (SQL Server's values; 0 for the rest).
    pub done_command: u16,
    /// sys.dm_exec_requests.command while it runs, as its position in [`COMMANDS`];
    /// None keeps the previous statement's (control flow, SET, MERGE).
    pub request_command: Option<u8>,
}

/// The commands sys.dm_exec_requests shows (SQL Server's spellings); 0 is a request
/// between statements.
pub const COMMANDS: &[&str] = &[
    "AWAITING COMMAND",
    "SELECT",
    "INSERT",
    "UPDATE",
    "DELETE",
    "EXECUTE",
    "WAITFOR",
    "BEGIN TRANSACTION",
    "COMMIT TRANSACTION",
    "ROLLBACK TRANSACTION",
    "SAVE TRANSACTION",
    "CHECKPOINT",
    "DBCC",
    "BACKUP DATABASE",
    "RESTORE DATABASE",
    "CREATE DATABASE",
    "ALTER DATABASE",
    "DROP DATABASE",
    "CREATE TABLE",
    "ALTER TABLE",
    "DROP TABLE",
    "CREATE INDEX",
    "DROP INDEX",
    "TRUNCATE TABLE",
    "CREATE PROCEDURE",
    "CREATE VIEW",
    "CREATE FUNCTION",
    "USE",
];

/// The position of `command` in [`COMMANDS`], found when compiling (a statement notes
/// its command by position, without comparing strings at run time).
const fn cmd(command: &str) -> Option<u8> {
    let mut i = 0;
    while i < COMMANDS.len() {
        let (a, b) = (COMMANDS[i].as_bytes(), command.as_bytes());
        if a.len() == b.len() {
            let mut k = 0;
            while k < a.len() && a[k] == b[k] {
                k += 1;
            }
            if k == a.len() {
                return Some(i as u8);
            }
        }
        i += 1;
    }
    panic!("a command missing from COMMANDS")
}

const PLAIN: StatementProps = StatementProps {
    data: false,
    implicit_transaction: false,
    resets_error: true,
    done_command: 0,
    request_command: None,
};

/// A statement that reads or writes tables.
const fn data(done_command: u16, request_command: Option<u8>) -> StatementProps {
    StatementProps { data: true, implicit_transaction: true, resets_error: true, done_command, request_command }
}

/// A statement that does not touch tables, with its DONE code and request command.
const fn other(done_command: u16, request_command: Option<u8>) -> StatementProps {
    StatementProps { done_command, request_command, ..PLAIN }
}

/// The properties of a statement of kind `k`.
pub fn props(k: &StatementKind) -> StatementProps {
    use StatementKind as S;
    match k {
        S::Query(q) => {
            let into = matches!(&q.body, SetExpr::Select(s) if s.into.is_some());
            StatementProps {
                implicit_transaction: reads_table(q),
                ..data(if into { c::SELECT_INTO } else { c::SELECT }, const { cmd("SELECT") })
            }
        }
        S::Insert(_) => const { data(c::INSERT, cmd("INSERT")) },
        S::Update(_) => const { data(c::UPDATE, cmd("UPDATE")) },
        S::Delete(_) => const { data(c::DELETE, cmd("DELETE")) },
        S::Merge(_) => const { data(c::MERGE, None) },
        S::CreateTable(_) => const { data(c::CREATE_TABLE, cmd("CREATE TABLE")) },
        S::AlterTable(_) => const { data(c::ALTER_TABLE, cmd("ALTER TABLE")) },
        S::CreateIndex(_) => const { data(c::CREATE_INDEX, cmd("CREATE INDEX")) },
        S::DropIndex { .. } => const { data(c::DROP_INDEX, cmd("DROP INDEX")) },
        S::CreateProcedure(_) => const { data(c::CREATE_PROCEDURE, cmd("CREATE PROCEDURE")) },
        S::CreateView(_) => const { data(c::CREATE_VIEW, cmd("CREATE VIEW")) },
        S::CreateFunction(_) => const { data(c::CREATE_FUNCTION, cmd("CREATE FUNCTION")) },
        S::CreateSchema { .. } => const { data(c::CREATE_SCHEMA, None) },
        S::CreateTrigger(_) | S::EnableTrigger { .. } | S::CreateType(_) | S::Sequence { .. } => {
            const { data(0, None) }
        }
        S::Truncate { .. } => const { data(0, cmd("TRUNCATE TABLE")) },
        S::Drop { kind: DropKind::Database, .. } => other(c::DROP_DATABASE, const { cmd("DROP DATABASE") }),
        S::Drop { kind: DropKind::Login, .. } => other(0, const { cmd("DROP TABLE") }),
        S::Drop { kind, .. } => data(
            match kind {
                DropKind::Table => c::DROP_TABLE,
                DropKind::View => c::DROP_VIEW,
                DropKind::Procedure => c::DROP_PROCEDURE,
                DropKind::Function => c::DROP_FUNCTION,
                DropKind::Schema => c::DROP_SCHEMA,
                _ => 0,
            },
            const { cmd("DROP TABLE") },
        ),
        S::Exec(_) | S::ExecString(_) => const { other(c::EXECUTE, cmd("EXECUTE")) },
        S::WaitFor { .. } => const { other(0, cmd("WAITFOR")) },
        S::BeginTransaction { .. } => {
            StatementProps { implicit_transaction: true, ..other(0, const { cmd("BEGIN TRANSACTION") }) }
        }
        S::Commit { .. } => const { other(0, cmd("COMMIT TRANSACTION")) },
        S::Rollback { .. } => const { other(0, cmd("ROLLBACK TRANSACTION")) },
        S::SaveTransaction { .. } => const { other(0, cmd("SAVE TRANSACTION")) },
        S::Checkpoint(_) => const { other(0, cmd("CHECKPOINT")) },
        S::Dbcc(_) => const { other(0, cmd("DBCC")) },
        S::Backup(_) => const { other(0, cmd("BACKUP DATABASE")) },
        S::Restore(_) => const { other(0, cmd("RESTORE DATABASE")) },
        S::CreateDatabase(_) => const { other(c::CREATE_DATABASE, cmd("CREATE DATABASE")) },
        S::AlterDatabase(_) => const { other(0, cmd("ALTER DATABASE")) },
        S::Use(_) => const { other(0, cmd("USE")) },
        // SQL Server's list of statements that begin a transaction under
        // IMPLICIT_TRANSACTIONS includes OPEN and FETCH.
        S::OpenCursor(_) | S::Fetch(_) => StatementProps { implicit_transaction: true, ..PLAIN },
        S::Block(_) | S::If { .. } | S::While { .. } | S::TryCatch { .. } | S::Label(_) => {
            StatementProps { resets_error: false, ..PLAIN }
        }
        S::Declare(decls) => StatementProps {
            resets_error: decls
                .iter()
                .any(|d| matches!(d, Declaration::Variable { value: Some(_), .. } | Declaration::Cursor { .. })),
            ..PLAIN
        },
        _ if is_database_security(k) => data(0, None),
        _ => PLAIN,
    }
}

/// Whether a query reads a table (`SELECT @@TRANCOUNT` does not).
fn reads_table(q: &Query) -> bool {
    fn body(b: &SetExpr) -> bool {
        match b {
            SetExpr::Select(s) => !s.from.is_empty() || s.into.is_some(),
            SetExpr::Query(q) => reads_table(q),
            SetExpr::SetOp { left, right, .. } => body(left) || body(right),
        }
    }
    body(&q.body)
}

/// CREATE USER / ROLE, DROP USER / ROLE, ALTER ROLE, GRANT / DENY / REVOKE: the database
/// security statements.
pub fn is_database_security(kind: &StatementKind) -> bool {
    matches!(
        kind,
        StatementKind::CreateUser(_)
            | StatementKind::CreateRole { .. }
            | StatementKind::AlterRole { server: false, .. }
            | StatementKind::Permission(_)
    ) || matches!(kind, StatementKind::Drop { kind: DropKind::User | DropKind::Role, .. })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(sql: &str) -> StatementProps {
        props(&crate::parse_batch(sql).unwrap().statements.remove(0).kind)
    }

    fn command(p: StatementProps) -> Option<&'static str> {
        p.request_command.map(|i| COMMANDS[usize::from(i)])
    }

    #[test]
    fn statement_properties() {
        let select_const = of("SELECT 1");
        assert!(select_const.data && !select_const.implicit_transaction && select_const.resets_error);
        assert_eq!((select_const.done_command, command(select_const)), (c::SELECT, Some("SELECT")));
        assert!(of("SELECT * FROM t").implicit_transaction);
        assert_eq!(of("SELECT * INTO u FROM t").done_command, c::SELECT_INTO);
        let insert = of("INSERT t VALUES (1)");
        assert!(insert.data && insert.implicit_transaction);
        assert_eq!((insert.done_command, command(insert)), (c::INSERT, Some("INSERT")));
        assert_eq!(command(of("MERGE t USING u ON 1 = 1 WHEN MATCHED THEN DELETE;")), None);
        let drop_db = of("DROP DATABASE d");
        assert!(!drop_db.data && !drop_db.implicit_transaction);
        assert_eq!((drop_db.done_command, command(drop_db)), (c::DROP_DATABASE, Some("DROP DATABASE")));
        assert!(of("DROP TABLE t").data);
        assert!(of("BEGIN TRANSACTION").implicit_transaction && !of("BEGIN TRANSACTION").data);
        assert!(!of("IF 1 = 1 PRINT 'x'").resets_error);
        assert!(!of("DECLARE @a int").resets_error);
        assert!(of("DECLARE @a int = 1").resets_error);
        assert!(of("GRANT SELECT ON t TO u").data);
        assert_eq!(of("SET NOCOUNT ON"), PLAIN);
    }
}
