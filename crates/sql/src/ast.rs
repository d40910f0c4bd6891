//! The T-SQL abstract syntax tree.
//!
//! Shape:
//! - a [`Batch`] is a list of [`Statement`]s; each statement has its [`Span`] (byte range
//!   and line in the batch text, so the original text of a procedure or view is
//!   `stmt.span.text(batch)`) and a [`StatementKind`];
//! - queries are [`Query`] (CTEs, a [`SetExpr`] body, ORDER BY, OFFSET/FETCH, FOR XML,
//!   OPTION) over [`Select`] blocks with [`TableWithJoins`] sources;
//! - expressions are [`Expr`] (a kind and a span) covering scalar expressions and search
//!   conditions alike, as T-SQL's grammar mixes them (IIF, CASE WHEN, CHECK, WHERE);
//! - names are [`Ident`] (value and quoting) and [`ObjectName`] (up to four parts, an
//!   omitted middle part as in `db..t` being an empty identifier).
//!
//! Honesty rule: everything the parser accepts is represented. Statements the parser
//! recognises but does not model (DDL triggers, UPDATE STATISTICS, BULK INSERT,
//! CREATE TYPE/SEQUENCE/SYNONYM/ROLE, ...) become [`StatementKind::Other`] with their
//! source text; options the AST does not name individually are kept as generic
//! [`OptionItem`]s with their names and values. Spans compare equal to each other (see
//! [`Span`]), so ASTs compare by meaning.

use types::TypeArg;

pub use crate::lexer::QuoteStyle;
pub use crate::span::Span;

// ---------------------------------------------------------------------------------------
// Names
// ---------------------------------------------------------------------------------------

/// An identifier: its value (delimiters and escapes removed) and how it was quoted. Names
/// compare case-sensitively here; the binder applies the collation.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Ident {
    pub value: String,
    pub quote: QuoteStyle,
}

impl Ident {
    /// An identifier that prints correctly: bracketed if it is not a valid regular
    /// identifier or is a reserved keyword.
    pub fn new(value: impl Into<String>) -> Ident {
        let value = value.into();
        let quote = if is_regular_identifier(&value) { QuoteStyle::None } else { QuoteStyle::Bracket };
        Ident { value, quote }
    }

    /// An identifier written without delimiters (printed as is).
    pub fn plain(value: impl Into<String>) -> Ident {
        Ident { value: value.into(), quote: QuoteStyle::None }
    }

    /// Case-insensitive comparison with a keyword or name.
    pub fn eq_ignore_case(&self, other: &str) -> bool {
        self.value.eq_ignore_ascii_case(other)
    }
}

/// Can `s` be written without delimiters?
pub fn is_regular_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    let Some(first) = chars.next() else {
        return false;
    };
    (first.is_alphabetic() || first == '_' || first == '#')
        && chars.all(|c| c.is_alphanumeric() || matches!(c, '_' | '@' | '#' | '$'))
        && !crate::keywords::is_reserved(s)
}

/// A multi-part name `server.database.schema.object` (1 to 4 parts, rightmost is the
/// object). An omitted part (`tempdb..t`) is an empty identifier.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Default)]
pub struct ObjectName {
    pub parts: Vec<Ident>,
}

impl ObjectName {
    pub fn from_ident(ident: Ident) -> ObjectName {
        ObjectName { parts: vec![ident] }
    }

    /// The rightmost part (the object, or the column in a column reference).
    pub fn name(&self) -> &Ident {
        // The parser never builds an empty name; one built by hand reads as "".
        static EMPTY: Ident = Ident { value: String::new(), quote: QuoteStyle::None };
        self.parts.last().unwrap_or(&EMPTY)
    }

    /// The part `n` places left of the object (1 = schema, 2 = database, 3 = server),
    /// if written and not empty.
    pub fn qualifier(&self, n: usize) -> Option<&Ident> {
        let idx = self.parts.len().checked_sub(1 + n)?;
        self.parts.get(idx).filter(|i| !i.value.is_empty())
    }

    pub fn schema(&self) -> Option<&Ident> {
        self.qualifier(1)
    }

    pub fn database(&self) -> Option<&Ident> {
        self.qualifier(2)
    }

    pub fn server(&self) -> Option<&Ident> {
        self.qualifier(3)
    }
}

/// A name that may also be given by a variable (`BACKUP DATABASE @db`, `BEGIN TRAN @t`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NameRef {
    Name(Ident),
    /// The variable's name, with its `@`.
    Variable(String),
}

/// A declared type as written: `int`, `decimal(18, 2)`, `nvarchar(max)`, `dbo.MyType`,
/// `double precision`. The binder maps it to a `types::SqlType`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DataType {
    pub name: ObjectName,
    pub args: Vec<TypeArg>,
}

// ---------------------------------------------------------------------------------------
// Batches and statements
// ---------------------------------------------------------------------------------------

/// One batch: what a client sends in one request (GO is the client's separator and never
/// appears here).
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    pub statements: Vec<Statement>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Statement {
    pub kind: StatementKind,
    /// From the first token to the last (a terminating `;` is not included).
    pub span: Span,
}

impl Statement {
    pub fn line(&self) -> u32 {
        self.span.line
    }
}

/// Calls `f` on each table source of a FROM list (nested joins included).
pub fn for_each_factor<'a>(from: &'a [TableWithJoins], f: &mut dyn FnMut(&'a TableFactor)) {
    fn visit<'a>(t: &'a TableFactor, f: &mut dyn FnMut(&'a TableFactor)) {
        f(t);
        if let TableFactor::NestedJoin(n) = t {
            visit(&n.relation, f);
            for j in &n.joins {
                visit(&j.relation, f);
            }
        }
    }
    for twj in from {
        visit(&twj.relation, f);
        for j in &twj.joins {
            visit(&j.relation, f);
        }
    }
}

/// The first `Some` that `f` gives for a statement of `body`, in order, descending into
/// BEGIN ... END blocks, IF and WHILE bodies and TRY/CATCH blocks.
pub fn find_statement<T>(body: &[Statement], f: &mut dyn FnMut(&Statement) -> Option<T>) -> Option<T> {
    for s in body {
        if let Some(found) = f(s) {
            return Some(found);
        }
        let found = match &s.kind {
            StatementKind::Block(b) => find_statement(b, f),
            StatementKind::If { then_branch, else_branch, .. } => find_statement(std::slice::from_ref(then_branch), f)
                .or_else(|| else_branch.as_deref().and_then(|e| find_statement(std::slice::from_ref(e), f))),
            StatementKind::While { body, .. } => find_statement(std::slice::from_ref(body), f),
            StatementKind::TryCatch { try_block, catch_block } => {
                find_statement(try_block, f).or_else(|| find_statement(catch_block, f))
            }
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

#[derive(Debug, Clone, PartialEq)]
pub enum StatementKind {
    /// SELECT (with CTEs, set operators, ...).
    Query(Box<Query>),
    Insert(Box<Insert>),
    Update(Box<Update>),
    Delete(Box<Delete>),
    Merge(Box<Merge>),
    /// INSERT BULK: what a client's bulk copy API sends before the bulk-load message.
    InsertBulk(Box<InsertBulk>),
    Use(Ident),

    CreateDatabase(Box<CreateDatabase>),
    AlterDatabase(Box<AlterDatabase>),
    CreateSchema {
        name: Ident,
        authorization: Option<Ident>,
    },
    CreateTable(Box<CreateTable>),
    AlterTable(Box<AlterTable>),
    CreateIndex(Box<CreateIndex>),
    AlterIndex(Box<AlterIndex>),
    DropIndex {
        if_exists: bool,
        indexes: Vec<DropIndexItem>,
    },
    CreateProcedure(Box<CreateProcedure>),
    /// CREATE/ALTER TRIGGER on a table or view (DML triggers; DDL and LOGON triggers are
    /// [`StatementKind::Other`]).
    CreateTrigger(Box<CreateTrigger>),
    /// {ENABLE | DISABLE} TRIGGER {ALL | names} ON table (`names` None for ALL).
    EnableTrigger {
        enable: bool,
        names: Option<Vec<ObjectName>>,
        table: ObjectName,
    },
    CreateView(Box<CreateView>),
    CreateFunction(Box<CreateFunction>),
    /// CREATE TYPE name AS TABLE (...) or FROM base_type.
    CreateType(Box<CreateType>),
    /// DROP TABLE/VIEW/PROCEDURE/FUNCTION/DATABASE/SCHEMA/... [IF EXISTS] names.
    Drop {
        kind: DropKind,
        if_exists: bool,
        names: Vec<ObjectName>,
    },
    Truncate {
        table: ObjectName,
    },

    Declare(Vec<Declaration>),
    /// SET @v = expr, SET @v += expr, ...
    SetVariable {
        name: String,
        op: AssignOp,
        value: Expr,
    },
    /// SET @c = CURSOR ... FOR select: a new cursor for a cursor variable.
    SetCursor {
        name: String,
        definition: Box<CursorDefinition>,
    },
    SetOption(SetOption),

    /// BEGIN ... END
    Block(Vec<Statement>),
    If {
        condition: Expr,
        then_branch: Box<Statement>,
        else_branch: Option<Box<Statement>>,
    },
    While {
        condition: Expr,
        body: Box<Statement>,
    },
    Break,
    Continue,
    Goto(Ident),
    /// `label:`
    Label(Ident),
    Return(Option<Expr>),
    TryCatch {
        try_block: Vec<Statement>,
        catch_block: Vec<Statement>,
    },
    /// THROW; (re-throw) or THROW number, message, state.
    Throw(Option<Box<ThrowArgs>>),
    Raiserror(Box<Raiserror>),
    Print(Expr),
    WaitFor {
        kind: WaitForKind,
        value: Expr,
    },

    /// EXEC procedure (also a procedure call without EXEC as the first statement of a
    /// batch, which is the same thing).
    Exec(Box<ExecProcedure>),
    /// EXEC (string expression)
    ExecString(Box<ExecString>),
    /// EXECUTE AS {CALLER | LOGIN = ... | USER = ...}
    ExecuteAs(ExecuteAs),
    Revert,

    BeginTransaction {
        name: Option<NameRef>,
        distributed: bool,
        /// WITH MARK ['description']
        mark: Option<Option<Expr>>,
    },
    Commit {
        name: Option<NameRef>,
        /// WITH (DELAYED_DURABILITY = ON | OFF)
        delayed_durability: Option<bool>,
    },
    Rollback {
        name: Option<NameRef>,
    },
    SaveTransaction {
        name: NameRef,
    },
    Checkpoint(Option<Expr>),

    Dbcc(Box<Dbcc>),
    Backup(Box<Backup>),
    Restore(Box<Restore>),
    /// CREATE or ALTER EVENT SESSION.
    EventSession(Box<EventSession>),

    CreateLogin(Box<CreateLogin>),
    AlterLogin(Box<AlterLogin>),
    CreateUser(Box<CreateUser>),
    /// CREATE ROLE name [AUTHORIZATION owner] (a database role).
    CreateRole {
        name: Ident,
        authorization: Option<Ident>,
    },
    /// ALTER SERVER ROLE r {ADD|DROP} MEMBER m, or ALTER ROLE (database roles).
    AlterRole {
        server: bool,
        role: Ident,
        add: bool,
        member: Ident,
    },
    /// GRANT, DENY, REVOKE.
    Permission(Box<Permission>),

    OpenCursor(CursorRef),
    CloseCursor(CursorRef),
    DeallocateCursor(CursorRef),
    Fetch(Box<Fetch>),

    Kill {
        target: Expr,
        status_only: bool,
    },
    Reconfigure {
        with_override: bool,
    },
    Shutdown {
        nowait: bool,
    },

    /// CREATE SEQUENCE (`alter` false) or ALTER SEQUENCE (`alter` true).
    Sequence {
        alter: bool,
        def: Box<SequenceDef>,
    },

    /// A statement recognised and delimited but not modelled: `keyword` names it (e.g.
    /// "CREATE TRIGGER", "UPDATE STATISTICS") and `text` is its source.
    Other {
        keyword: String,
        text: String,
    },
}

// ---------------------------------------------------------------------------------------
// Expressions
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
}

impl Expr {
    /// An expression with no position (for building ASTs in code).
    pub fn new(kind: ExprKind) -> Expr {
        Expr { kind, span: Span::default() }
    }

    /// The value of a string literal or the name of a bare one-part identifier: how T-SQL
    /// spells names in DBCC arguments, file specs and EXEC arguments (`DBCC CHECKDB(db)` and
    /// `DBCC CHECKDB('db')` mean the same).
    pub fn as_name(&self) -> Option<&str> {
        match &self.kind {
            ExprKind::Literal(Literal::String { value, .. }) => Some(value),
            ExprKind::Column(name) if name.parts.len() == 1 => Some(&name.parts[0].value),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Literal(Literal),
    /// A column (or, by position, a name T-SQL treats as a word: DATEADD's datepart,
    /// DBCC and EXEC arguments), with up to 4 parts.
    Column(ObjectName),
    /// `@name` (the name includes the `@`).
    Variable(String),
    /// `@@NAME` (as written, including `@@`).
    SystemVariable(String),
    /// CURRENT_TIMESTAMP, CURRENT_USER, SESSION_USER, SYSTEM_USER, USER (no parentheses).
    Niladic(Niladic),
    /// DEFAULT, as a VALUES item, a function argument or an EXEC argument.
    Default,
    Unary {
        op: UnaryOp,
        expr: Box<Expr>,
    },
    Binary {
        op: BinaryOp,
        left: Box<Expr>,
        right: Box<Expr>,
    },
    Like {
        expr: Box<Expr>,
        pattern: Box<Expr>,
        escape: Option<Box<Expr>>,
        negated: bool,
    },
    Between {
        expr: Box<Expr>,
        low: Box<Expr>,
        high: Box<Expr>,
        negated: bool,
    },
    InList {
        expr: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    InSubquery {
        expr: Box<Expr>,
        query: Box<Query>,
        negated: bool,
    },
    /// `x > ALL (subquery)`, `x = ANY (...)`, `x = SOME (...)`.
    Quantified {
        left: Box<Expr>,
        op: BinaryOp,
        quantifier: Quantifier,
        query: Box<Query>,
    },
    Exists(Box<Query>),
    IsNull {
        expr: Box<Expr>,
        negated: bool,
    },
    Case(Box<Case>),
    /// CAST(expr AS type) and TRY_CAST.
    Cast {
        expr: Box<Expr>,
        data_type: DataType,
        try_cast: bool,
    },
    /// CONVERT(type, expr [, style]) and TRY_CONVERT.
    Convert {
        data_type: DataType,
        expr: Box<Expr>,
        style: Option<Box<Expr>>,
        try_convert: bool,
    },
    /// PARSE(expr AS type [USING culture]) and TRY_PARSE.
    Parse {
        expr: Box<Expr>,
        data_type: DataType,
        culture: Option<Box<Expr>>,
        try_parse: bool,
    },
    Function(Box<FunctionCall>),
    /// `target.method(args)`: the xml methods value, query, exist, nodes, modify, and
    /// the hierarchyid methods (GetLevel, ToString, ...).
    MethodCall {
        target: Box<Expr>,
        method: Ident,
        args: Vec<Expr>,
    },
    /// `type::method(args)`: a CLR system type's static method (`hierarchyid::GetRoot()`).
    StaticMethodCall {
        type_name: Ident,
        method: Ident,
        args: Vec<Expr>,
    },
    /// A scalar subquery.
    Subquery(Box<Query>),
    AtTimeZone {
        expr: Box<Expr>,
        zone: Box<Expr>,
    },
    Collate {
        expr: Box<Expr>,
        collation: Ident,
    },
    /// NEXT VALUE FOR sequence [OVER (ORDER BY ...)]: with OVER, the rows take their
    /// values in that order.
    NextValueFor {
        name: ObjectName,
        over: Option<Box<WindowSpec>>,
    },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Literal {
    /// Digits as written (the binder types it int, bigint or numeric by size).
    Integer(String),
    /// A number with a decimal point, as written.
    Decimal(String),
    /// A number with an exponent, as written.
    Float(String),
    /// The number after `$`, as written.
    Money(String),
    String {
        value: String,
        unicode: bool,
    },
    Binary(Vec<u8>),
    Null,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Niladic {
    CurrentTimestamp,
    CurrentUser,
    SessionUser,
    SystemUser,
    User,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Plus,
    Minus,
    BitNot,
    Not,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Mul,
    Div,
    Mod,
    /// `+`: addition or string concatenation (decided by type).
    Add,
    Sub,
    BitAnd,
    BitOr,
    BitXor,
    Eq,
    /// `<>` and `!=`.
    NotEq,
    Lt,
    Gt,
    LtEq,
    GtEq,
    /// `!<`
    NotLt,
    /// `!>`
    NotGt,
    And,
    Or,
}

impl BinaryOp {
    pub fn is_comparison(self) -> bool {
        matches!(
            self,
            BinaryOp::Eq
                | BinaryOp::NotEq
                | BinaryOp::Lt
                | BinaryOp::Gt
                | BinaryOp::LtEq
                | BinaryOp::GtEq
                | BinaryOp::NotLt
                | BinaryOp::NotGt
        )
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Quantifier {
    All,
    Any,
    Some,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// `CASE operand WHEN value ...` (simple) or None (searched).
    pub operand: Option<Expr>,
    pub branches: Vec<(Expr, Expr)>,
    pub else_result: Option<Expr>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct FunctionCall {
    pub name: ObjectName,
    pub args: Vec<Expr>,
    /// `COUNT(*)`, `CHECKSUM(*)`.
    pub star: bool,
    /// `COUNT(DISTINCT x)`.
    pub distinct: bool,
    /// `STRING_AGG(x, ',') WITHIN GROUP (ORDER BY ...)`.
    pub within_group: Vec<OrderByItem>,
    pub over: Option<WindowSpec>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WindowSpec {
    pub partition_by: Vec<Expr>,
    pub order_by: Vec<OrderByItem>,
    pub frame: Option<WindowFrame>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct WindowFrame {
    pub units: FrameUnits,
    pub start: FrameBound,
    /// The end bound of `BETWEEN start AND end`; None for the short form (`ROWS 2 PRECEDING`).
    pub end: Option<FrameBound>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FrameUnits {
    Rows,
    Range,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FrameBound {
    UnboundedPreceding,
    Preceding(Box<Expr>),
    CurrentRow,
    Following(Box<Expr>),
    UnboundedFollowing,
}

/// `=`, `+=`, `-=`, ... in SET and SELECT assignments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssignOp {
    Assign,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    BitAnd,
    BitOr,
    BitXor,
}

impl AssignOp {
    /// The binary operator a compound assignment applies (`+=` is `Add`).
    pub fn binary_op(self) -> Option<BinaryOp> {
        Some(match self {
            AssignOp::Assign => return None,
            AssignOp::Add => BinaryOp::Add,
            AssignOp::Sub => BinaryOp::Sub,
            AssignOp::Mul => BinaryOp::Mul,
            AssignOp::Div => BinaryOp::Div,
            AssignOp::Mod => BinaryOp::Mod,
            AssignOp::BitAnd => BinaryOp::BitAnd,
            AssignOp::BitOr => BinaryOp::BitOr,
            AssignOp::BitXor => BinaryOp::BitXor,
        })
    }
}

// ---------------------------------------------------------------------------------------
// Queries
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// WITH common table expressions.
    pub with: Vec<Cte>,
    pub body: SetExpr,
    pub order_by: Vec<OrderByItem>,
    /// OFFSET n ROWS
    pub offset: Option<Expr>,
    /// FETCH {FIRST|NEXT} n ROWS ONLY
    pub fetch: Option<Expr>,
    pub for_clause: Option<ForClause>,
    /// OPTION (...)
    pub hints: Vec<QueryHint>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Cte {
    pub name: Ident,
    pub columns: Vec<Ident>,
    pub query: Box<Query>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SetExpr {
    Select(Box<Select>),
    /// A parenthesized query.
    Query(Box<Query>),
    SetOp {
        op: SetOperator,
        left: Box<SetExpr>,
        right: Box<SetExpr>,
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SetOperator {
    Union,
    UnionAll,
    Except,
    Intersect,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Select {
    pub distinct: bool,
    pub top: Option<Top>,
    pub items: Vec<SelectItem>,
    /// SELECT ... INTO table
    pub into: Option<ObjectName>,
    pub from: Vec<TableWithJoins>,
    pub where_clause: Option<Expr>,
    pub group_by: Vec<GroupByItem>,
    pub having: Option<Expr>,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Top {
    pub quantity: Expr,
    pub percent: bool,
    pub with_ties: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SelectItem {
    /// `*` or `qualifier.*`
    Wildcard(Option<ObjectName>),
    /// `expr [AS] alias` or `alias = expr` (the same thing).
    Expr { expr: Expr, alias: Option<Ident> },
    /// `@v = expr`, `@v += expr`
    Assign { variable: String, op: AssignOp, expr: Expr },
}

#[derive(Debug, Clone, PartialEq)]
pub struct TableWithJoins {
    pub relation: TableFactor,
    pub joins: Vec<Join>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TableAlias {
    pub name: Ident,
    pub columns: Vec<Ident>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TableFactor {
    Table {
        name: ObjectName,
        alias: Option<Ident>,
        hints: Vec<TableHint>,
    },
    /// A table variable `@t`.
    Variable {
        name: String,
        alias: Option<Ident>,
    },
    Derived {
        query: Box<Query>,
        alias: Option<TableAlias>,
    },
    /// `(VALUES (...), (...)) AS v(a, b)`
    Values {
        rows: Vec<Vec<Expr>>,
        alias: Option<TableAlias>,
    },
    /// A table-valued function: `sys.dm_io_virtual_file_stats(DB_ID('x'), 2)`.
    Function {
        name: ObjectName,
        args: Vec<Expr>,
        alias: Option<TableAlias>,
    },
    /// `OPENJSON(json [, path]) [WITH (col type ['path'] [AS JSON], ...)] [AS] alias`.
    OpenJson {
        args: Vec<Expr>,
        /// The explicit schema of a WITH clause (None: key, value, type).
        schema: Option<Vec<OpenJsonColumn>>,
        alias: Option<TableAlias>,
    },
    /// `x.nodes('/path') AS t(c)` over a column or variable.
    XmlNodes {
        target: Box<Expr>,
        args: Vec<Expr>,
        alias: Option<TableAlias>,
    },
    /// `(a JOIN b ON ...)`
    NestedJoin(Box<TableWithJoins>),
    /// `source PIVOT (agg(value) FOR column IN ([a], [b], ...)) [AS] alias`: the source is
    /// everything written before PIVOT (a table source or a join tree).
    Pivot {
        source: Box<TableWithJoins>,
        /// The aggregate function's name.
        aggregate: Ident,
        /// The column being aggregated.
        value: ObjectName,
        /// The column whose values become column headers.
        column: ObjectName,
        /// The IN list: the values, which also name the output columns.
        values: Vec<Ident>,
        alias: Ident,
    },
    /// `source UNPIVOT (value FOR name IN (a, b, ...)) [AS] alias`
    Unpivot {
        source: Box<TableWithJoins>,
        /// The output column that holds the values.
        value: Ident,
        /// The output column that holds the source column names.
        name: Ident,
        columns: Vec<Ident>,
        alias: Ident,
    },
}

/// One column of OPENJSON's WITH clause.
#[derive(Debug, Clone, PartialEq)]
pub struct OpenJsonColumn {
    pub name: Ident,
    pub data_type: DataType,
    /// The JSON path; None means `$.name`.
    pub path: Option<String>,
    pub as_json: bool,
}

/// A table hint: `NOLOCK`, `INDEX(ix)`, `FORCESEEK`, ... (name upper-cased).
#[derive(Debug, Clone, PartialEq)]
pub struct TableHint {
    pub name: String,
    pub args: Vec<Expr>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Join {
    pub kind: JoinKind,
    /// LOOP, HASH, MERGE, REMOTE (upper-cased).
    pub hint: Option<String>,
    pub relation: TableFactor,
    pub on: Option<Expr>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JoinKind {
    Inner,
    LeftOuter,
    RightOuter,
    FullOuter,
    Cross,
    CrossApply,
    OuterApply,
}

#[derive(Debug, Clone, PartialEq)]
pub enum GroupByItem {
    Expr(Expr),
    Rollup(Vec<Expr>),
    Cube(Vec<Expr>),
    /// Each set is a list of expressions; `()` is the empty set.
    GroupingSets(Vec<Vec<Expr>>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SortDirection {
    Asc,
    Desc,
}

#[derive(Debug, Clone, PartialEq)]
pub struct OrderByItem {
    pub expr: Expr,
    /// None when neither ASC nor DESC was written.
    pub direction: Option<SortDirection>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ForClause {
    pub kind: ForKind,
    /// PATH('row'), ROOT('x'), TYPE, ELEMENTS XSINIL, INCLUDE_NULL_VALUES, ...
    pub options: Vec<ForOption>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ForKind {
    Xml,
    Json,
    Browse,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ForOption {
    /// Upper-cased words, space separated: "PATH", "ELEMENTS XSINIL", "BINARY BASE64".
    pub name: String,
    pub arg: Option<Expr>,
}

/// One hint in OPTION (...): `RECOMPILE`, `MAXDOP 1`, `HASH JOIN`, `LABEL = 'x'`,
/// `USE HINT ('...')`, `MAXRECURSION 0`, `OPTIMIZE FOR UNKNOWN`.
#[derive(Debug, Clone, PartialEq)]
pub struct QueryHint {
    /// Upper-cased words, space separated.
    pub name: String,
    /// Written with `=` before the value.
    pub equals: bool,
    pub value: Option<Expr>,
    /// A parenthesized argument list.
    pub args: Option<Vec<Expr>>,
}

// ---------------------------------------------------------------------------------------
// DML
// ---------------------------------------------------------------------------------------

/// The table an INSERT, UPDATE or DELETE changes (for UPDATE/DELETE this may be an alias
/// defined in the FROM clause).
#[derive(Debug, Clone, PartialEq)]
pub enum DmlTarget {
    Table { name: ObjectName, hints: Vec<TableHint> },
    Variable(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct OutputClause {
    pub items: Vec<SelectItem>,
    pub into: Option<OutputInto>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct OutputInto {
    pub target: DmlTarget,
    pub columns: Vec<Ident>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Insert {
    pub with: Vec<Cte>,
    pub top: Option<Top>,
    pub target: DmlTarget,
    pub columns: Vec<Ident>,
    pub output: Vec<OutputClause>,
    pub source: InsertSource,
}

#[derive(Debug, Clone, PartialEq)]
pub enum InsertSource {
    Values(Vec<Vec<Expr>>),
    Query(Box<Query>),
    /// INSERT ... EXEC procedure
    ExecProcedure(Box<ExecProcedure>),
    /// INSERT ... EXEC (string)
    ExecString(Box<ExecString>),
    DefaultValues,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Update {
    pub with: Vec<Cte>,
    pub top: Option<Top>,
    pub target: DmlTarget,
    pub assignments: Vec<Assignment>,
    pub output: Vec<OutputClause>,
    pub from: Vec<TableWithJoins>,
    pub where_clause: Option<Expr>,
    /// WHERE CURRENT OF cursor (then `where_clause` is None).
    pub current_of: Option<CursorRef>,
    pub hints: Vec<QueryHint>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Assignment {
    pub target: AssignTarget,
    pub op: AssignOp,
    pub value: Expr,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AssignTarget {
    Column(ObjectName),
    Variable(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Delete {
    pub with: Vec<Cte>,
    pub top: Option<Top>,
    pub target: DmlTarget,
    pub output: Vec<OutputClause>,
    pub from: Vec<TableWithJoins>,
    pub where_clause: Option<Expr>,
    /// WHERE CURRENT OF cursor (then `where_clause` is None).
    pub current_of: Option<CursorRef>,
    pub hints: Vec<QueryHint>,
}

/// `[WITH ctes] MERGE [TOP (n) [PERCENT]] [INTO] target [WITH (hints)] [[AS] alias]
/// USING source ON condition WHEN ... [OUTPUT ...] [OPTION (...)];`
#[derive(Debug, Clone, PartialEq)]
pub struct Merge {
    pub with: Vec<Cte>,
    pub top: Option<Top>,
    pub target: DmlTarget,
    pub alias: Option<Ident>,
    /// The table source after USING (a table, view, derived table, VALUES, a join).
    pub source: TableWithJoins,
    pub on: Expr,
    /// In the order written (the first clause of a kind whose condition holds applies).
    pub clauses: Vec<MergeClause>,
    pub output: Vec<OutputClause>,
    pub hints: Vec<QueryHint>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct MergeClause {
    pub when: MergeWhen,
    /// `AND condition`
    pub condition: Option<Expr>,
    pub action: MergeAction,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MergeWhen {
    /// WHEN MATCHED
    Matched,
    /// WHEN NOT MATCHED [BY TARGET]: a source row no target row matches.
    NotMatchedByTarget,
    /// WHEN NOT MATCHED BY SOURCE: a target row no source row matches.
    NotMatchedBySource,
}

#[derive(Debug, Clone, PartialEq)]
pub enum MergeAction {
    Update(Vec<Assignment>),
    Delete,
    /// INSERT [(columns)] VALUES (...); `values` None is DEFAULT VALUES.
    Insert {
        columns: Vec<Ident>,
        values: Option<Vec<Expr>>,
    },
}

// ---------------------------------------------------------------------------------------
// Generic options
// ---------------------------------------------------------------------------------------

/// An option the AST keeps by name: `NO_INFOMSGS`, `MAXDOP = 4`, `MAX_MEMORY = 4096 KB`,
/// `AUTO_CLOSE OFF`, `QUERY_STORE = ON (OPERATION_MODE = READ_WRITE)`.
#[derive(Debug, Clone, PartialEq)]
pub struct OptionItem {
    /// Upper-cased.
    pub name: String,
    /// Written with `=` (some options require it, others forbid it).
    pub equals: bool,
    pub value: Option<OptionValue>,
}

impl OptionItem {
    pub fn is(&self, name: &str) -> bool {
        self.name.eq_ignore_ascii_case(name)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub enum OptionValue {
    /// A word or name: ON, OFF, ALLOW_SINGLE_EVENT_LOSS, PAGE, dbo.history.
    Name(ObjectName),
    /// A literal or variable.
    Expr(Expr),
    /// A number with a unit: `4096 KB`, `30 SECONDS`, `10 %` (unit upper-cased).
    Quantity { value: Expr, unit: String },
    /// `(a = 1, b)` optionally after a word: `ON (OPERATION_MODE = READ_WRITE)`.
    List { word: Option<Ident>, items: Vec<OptionItem> },
}

// ---------------------------------------------------------------------------------------
// DDL
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CreateMode {
    Create,
    Alter,
    CreateOrAlter,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropKind {
    Table,
    View,
    Procedure,
    Function,
    Trigger,
    Database,
    Schema,
    Login,
    User,
    Role,
    Type,
    Sequence,
    Synonym,
    EventSession(EventSessionScope),
}

/// A size in a file spec: `32768MB`, `10%`, `1024` (no unit: MB).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub value: u64,
    pub unit: Option<SizeUnit>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SizeUnit {
    Kb,
    Mb,
    Gb,
    Tb,
    Percent,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MaxSize {
    Unlimited,
    Size(Size),
}

/// `(NAME = ..., FILENAME = ..., SIZE = ..., MAXSIZE = ..., FILEGROWTH = ...)`. Names are
/// expressions because T-SQL accepts both `NAME = x` and `NAME = N'x'` (see
/// [`Expr::as_name`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FileSpec {
    pub name: Option<Expr>,
    pub new_name: Option<Expr>,
    pub filename: Option<Expr>,
    pub size: Option<Size>,
    pub max_size: Option<MaxSize>,
    pub file_growth: Option<Size>,
    pub offline: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Filegroup {
    pub name: Ident,
    /// CONTAINS FILESTREAM / CONTAINS MEMORY_OPTIMIZED_DATA (upper-cased).
    pub contains: Option<String>,
    pub default: bool,
    pub files: Vec<FileSpec>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreateDatabase {
    pub name: Ident,
    /// The files of the primary filegroup (`ON [PRIMARY] (...), (...)`).
    pub files: Vec<FileSpec>,
    pub filegroups: Vec<Filegroup>,
    pub log_files: Vec<FileSpec>,
    pub collation: Option<Ident>,
    pub options: Vec<OptionItem>,
    /// FOR ATTACH / FOR ATTACH_REBUILD_LOG (upper-cased).
    pub attach: Option<String>,
    /// AS SNAPSHOT OF source
    pub snapshot_of: Option<Ident>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum DatabaseRef {
    Name(Ident),
    /// ALTER DATABASE CURRENT
    Current,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AlterDatabase {
    pub database: DatabaseRef,
    pub action: AlterDatabaseAction,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AlterDatabaseAction {
    Set { options: Vec<DatabaseOption>, termination: Option<Termination> },
    ModifyName(Ident),
    AddFiles { log: bool, files: Vec<FileSpec>, filegroup: Option<Ident> },
    ModifyFile(Box<FileSpec>),
    RemoveFile(Expr),
    AddFilegroup(Ident),
    RemoveFilegroup(Ident),
    Collate(Ident),
}

#[derive(Debug, Clone, PartialEq)]
pub enum Termination {
    RollbackImmediate,
    RollbackAfter { seconds: u64 },
    NoWait,
}

#[derive(Debug, Clone, PartialEq)]
pub enum DatabaseOption {
    Recovery(RecoveryModel),
    DelayedDurability(DelayedDurability),
    TargetRecoveryTime {
        value: u64,
        unit: TimeUnit,
    },
    ReadOnly,
    ReadWrite,
    PageVerify(PageVerify),
    SingleUser,
    RestrictedUser,
    MultiUser,
    Online,
    Offline,
    Emergency,
    /// Any other option, by name (AUTO_CLOSE OFF, COMPATIBILITY_LEVEL = 150, ...).
    Other(OptionItem),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RecoveryModel {
    Simple,
    Full,
    BulkLogged,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DelayedDurability {
    Disabled,
    Allowed,
    Forced,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimeUnit {
    Seconds,
    Minutes,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PageVerify {
    Checksum,
    TornPageDetection,
    None,
}

/// `ON [PRIMARY]`, `ON fg`, `ON scheme(column)`.
#[derive(Debug, Clone, PartialEq)]
pub struct FilegroupRef {
    pub name: Ident,
    pub partition_column: Option<Ident>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreateTable {
    pub name: ObjectName,
    pub elements: Vec<TableElement>,
    pub on: Option<FilegroupRef>,
    pub textimage_on: Option<Ident>,
    pub options: Vec<OptionItem>,
}

/// `INSERT BULK table (col type [COLLATE c] [NULL | NOT NULL], ...) [WITH (options)]`.
#[derive(Debug, Clone, PartialEq)]
pub struct InsertBulk {
    pub table: ObjectName,
    pub columns: Vec<ColumnDef>,
    pub options: Vec<BulkOption>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum BulkOption {
    /// CHECK_CONSTRAINTS, FIRE_TRIGGERS, KEEP_NULLS, KEEP_IDENTITY, TABLOCK (upper-cased).
    Flag(String),
    /// ROWS_PER_BATCH = n, KILOBYTES_PER_BATCH = n (upper-cased name).
    Value(String, Expr),
    /// ORDER (col [ASC | DESC], ...)
    Order(Vec<IndexColumn>),
}

/// `CREATE TYPE name AS TABLE (elements)` or `CREATE TYPE name FROM base [NULL | NOT NULL]`.
#[derive(Debug, Clone, PartialEq)]
pub struct CreateType {
    pub name: ObjectName,
    pub definition: TypeDefinition,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TypeDefinition {
    Table(Vec<TableElement>),
    /// An alias type: NOT NULL -> Some(false), NULL -> Some(true), neither -> None.
    Alias {
        base: DataType,
        nullable: Option<bool>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub enum TableElement {
    Column(ColumnDef),
    Constraint(TableConstraint),
    /// An inline `INDEX ix [UNIQUE] [CLUSTERED|NONCLUSTERED] (cols)`.
    Index(TableIndex),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    pub name: Ident,
    /// None for a computed column.
    pub data_type: Option<DataType>,
    /// `AS expr [PERSISTED]`
    pub computed: Option<Computed>,
    /// In source order.
    pub options: Vec<ColumnOption>,
}

impl ColumnDef {
    /// NOT NULL -> Some(false), NULL -> Some(true), neither written -> None.
    pub fn nullable(&self) -> Option<bool> {
        self.options.iter().rev().find_map(|o| match o {
            ColumnOption::Null => Some(true),
            ColumnOption::NotNull => Some(false),
            _ => None,
        })
    }

    pub fn is_sparse(&self) -> bool {
        self.options.iter().any(|o| matches!(o, ColumnOption::Sparse))
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Computed {
    pub expr: Expr,
    pub persisted: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ColumnOption {
    Null,
    NotNull,
    /// IDENTITY [(seed, increment)] [NOT FOR REPLICATION]
    Identity {
        seed_increment: Option<(Expr, Expr)>,
        not_for_replication: bool,
    },
    /// [CONSTRAINT name] DEFAULT expr
    Default {
        name: Option<Ident>,
        expr: Expr,
    },
    PrimaryKey {
        name: Option<Ident>,
        clustered: Option<bool>,
        options: Vec<OptionItem>,
        on: Option<FilegroupRef>,
    },
    Unique {
        name: Option<Ident>,
        clustered: Option<bool>,
        options: Vec<OptionItem>,
        on: Option<FilegroupRef>,
    },
    Check {
        name: Option<Ident>,
        expr: Expr,
        not_for_replication: bool,
    },
    References {
        name: Option<Ident>,
        reference: Reference,
    },
    Collate(Ident),
    Sparse,
    RowGuidCol,
    Filestream,
    /// COLUMN_SET FOR ALL_SPARSE_COLUMNS
    ColumnSet,
    /// WITH VALUES after a DEFAULT (ALTER TABLE ADD: existing rows take the default).
    WithValues,
    /// An inline column index: INDEX ix [CLUSTERED|NONCLUSTERED]
    Index {
        name: Ident,
        clustered: Option<bool>,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    pub table: ObjectName,
    pub columns: Vec<Ident>,
    pub on_delete: Option<ReferentialAction>,
    pub on_update: Option<ReferentialAction>,
    pub not_for_replication: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReferentialAction {
    NoAction,
    Cascade,
    SetNull,
    SetDefault,
}

#[derive(Debug, Clone, PartialEq)]
pub struct IndexColumn {
    pub name: Ident,
    pub direction: Option<SortDirection>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct TableConstraint {
    pub name: Option<Ident>,
    pub kind: ConstraintKind,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ConstraintKind {
    PrimaryKey {
        clustered: Option<bool>,
        columns: Vec<IndexColumn>,
        options: Vec<OptionItem>,
        on: Option<FilegroupRef>,
    },
    Unique {
        clustered: Option<bool>,
        columns: Vec<IndexColumn>,
        options: Vec<OptionItem>,
        on: Option<FilegroupRef>,
    },
    ForeignKey {
        columns: Vec<Ident>,
        reference: Reference,
    },
    Check {
        expr: Expr,
        not_for_replication: bool,
    },
    /// ALTER TABLE ... ADD CONSTRAINT df DEFAULT expr FOR column
    Default {
        expr: Expr,
        column: Ident,
    },
}

#[derive(Debug, Clone, PartialEq)]
pub struct TableIndex {
    pub name: Ident,
    pub unique: bool,
    pub clustered: Option<bool>,
    pub columns: Vec<IndexColumn>,
    pub options: Vec<OptionItem>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AlterTable {
    pub name: ObjectName,
    pub action: AlterTableAction,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AlterTableAction {
    /// [WITH CHECK | WITH NOCHECK] ADD column or constraint, ...
    Add {
        with_check: Option<bool>,
        elements: Vec<TableElement>,
    },
    /// `DROP [CONSTRAINT] x, COLUMN y, ...`
    Drop(Vec<DropTableItem>),
    /// `ALTER COLUMN c type [COLLATE x] [NULL | NOT NULL] [SPARSE]`
    AlterColumn {
        name: Ident,
        data_type: DataType,
        collation: Option<Ident>,
        nullable: Option<bool>,
        sparse: bool,
    },
    /// ALTER COLUMN c {ADD | DROP} {ROWGUIDCOL | PERSISTED | SPARSE | NOT FOR REPLICATION | HIDDEN}
    AlterColumnProperty {
        name: Ident,
        add: bool,
        property: String,
    },
    /// [WITH CHECK|NOCHECK] {CHECK | NOCHECK} CONSTRAINT {ALL | names}
    CheckConstraints {
        with_check: Option<bool>,
        enable: bool,
        names: Option<Vec<Ident>>,
    },
    /// {ENABLE | DISABLE} TRIGGER {ALL | names}
    Trigger {
        enable: bool,
        names: Option<Vec<Ident>>,
    },
    Set(Vec<OptionItem>),
    Rebuild(Vec<OptionItem>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct DropTableItem {
    pub column: bool,
    pub if_exists: bool,
    pub name: Ident,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreateIndex {
    pub unique: bool,
    pub clustered: Option<bool>,
    pub columnstore: bool,
    pub name: Ident,
    pub table: ObjectName,
    pub columns: Vec<IndexColumn>,
    pub include: Vec<Ident>,
    /// The filter of a filtered index.
    pub filter: Option<Expr>,
    pub options: Vec<OptionItem>,
    pub on: Option<FilegroupRef>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AlterIndex {
    /// None for ALTER INDEX ALL.
    pub name: Option<Ident>,
    pub table: ObjectName,
    pub action: AlterIndexAction,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AlterIndexAction {
    Rebuild(Vec<OptionItem>),
    Reorganize(Vec<OptionItem>),
    Disable,
    Set(Vec<OptionItem>),
}

/// `DROP INDEX ix ON t` (index `ix`, table Some(t)) or the old `DROP INDEX t.ix`
/// (index `t.ix`, table None).
#[derive(Debug, Clone, PartialEq)]
pub struct DropIndexItem {
    pub index: ObjectName,
    pub table: Option<ObjectName>,
}

/// A procedure or function parameter.
#[derive(Debug, Clone, PartialEq)]
pub struct Parameter {
    /// With its `@`.
    pub name: String,
    pub data_type: DataType,
    pub varying: bool,
    pub default: Option<Expr>,
    /// OUTPUT or OUT
    pub output: bool,
    pub readonly: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ModuleOption {
    Encryption,
    Recompile,
    SchemaBinding,
    NativeCompilation,
    ViewMetadata,
    ReturnsNullOnNullInput,
    CalledOnNullInput,
    ExecuteAs(ExecuteAsPrincipal),
    /// Any other WITH option (upper-cased), e.g. INLINE = ON kept as "INLINE = ON".
    Other(OptionItem),
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExecuteAsPrincipal {
    Caller,
    SelfPrincipal,
    Owner,
    User(Expr),
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreateProcedure {
    pub mode: CreateMode,
    pub name: ObjectName,
    pub params: Vec<Parameter>,
    pub options: Vec<ModuleOption>,
    pub for_replication: bool,
    /// Every statement after AS to the end of the batch.
    pub body: Vec<Statement>,
    /// The source of the body (after AS).
    pub body_span: Span,
}

/// When a DML trigger runs: AFTER (also written FOR) or INSTEAD OF the statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TriggerTiming {
    After,
    InsteadOf,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreateTrigger {
    pub mode: CreateMode,
    pub name: ObjectName,
    pub table: ObjectName,
    pub options: Vec<ModuleOption>,
    pub timing: TriggerTiming,
    /// Written FOR rather than AFTER (printed back as written).
    pub written_for: bool,
    pub insert: bool,
    pub update: bool,
    pub delete: bool,
    pub not_for_replication: bool,
    /// Every statement after AS to the end of the batch.
    pub body: Vec<Statement>,
    pub body_span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreateView {
    pub mode: CreateMode,
    pub name: ObjectName,
    pub columns: Vec<Ident>,
    pub options: Vec<ModuleOption>,
    pub query: Box<Query>,
    pub check_option: bool,
    pub body_span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreateFunction {
    pub mode: CreateMode,
    pub name: ObjectName,
    pub params: Vec<Parameter>,
    pub returns: FunctionBody,
    pub options: Vec<ModuleOption>,
    pub body_span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FunctionBody {
    /// RETURNS type AS BEGIN ... RETURN expr END
    Scalar { data_type: DataType, body: Vec<Statement> },
    /// RETURNS TABLE AS RETURN (query)
    InlineTable { query: Box<Query> },
    /// RETURNS @t TABLE (...) AS BEGIN ... END
    MultiStatement { variable: String, elements: Vec<TableElement>, body: Vec<Statement> },
}

// ---------------------------------------------------------------------------------------
// Variables, SET, control flow, EXEC
// ---------------------------------------------------------------------------------------

/// The options of CREATE / ALTER SEQUENCE as written (None: not given). Values are
/// signed numeric constants.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct SequenceDef {
    pub name: ObjectName,
    /// AS type (CREATE only).
    pub data_type: Option<DataType>,
    /// START WITH (CREATE only).
    pub start: Option<Expr>,
    /// RESTART [WITH n] (ALTER only): Some(None) restarts at the start value.
    pub restart: Option<Option<Expr>>,
    pub increment: Option<Expr>,
    /// MINVALUE n, or NO MINVALUE (Some(None)).
    pub min: Option<Option<Expr>>,
    pub max: Option<Option<Expr>>,
    pub cycle: Option<bool>,
    pub cache: Option<SequenceCache>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum SequenceCache {
    /// CACHE without a size: the server picks it.
    Default,
    Size(Expr),
    /// NO CACHE.
    None,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Declaration {
    Variable { name: String, data_type: DataType, value: Option<Expr> },
    Table { name: String, elements: Vec<TableElement> },
    Cursor { name: Ident, definition: Box<CursorDefinition> },
}

#[derive(Debug, Clone, PartialEq)]
pub struct CursorDefinition {
    /// ISO options before CURSOR: INSENSITIVE, SCROLL (upper-cased).
    pub iso_options: Vec<String>,
    /// T-SQL options after CURSOR: LOCAL, FAST_FORWARD, STATIC, ... (upper-cased).
    pub options: Vec<String>,
    pub query: Box<Query>,
    /// FOR UPDATE [OF columns]
    pub for_update: Option<Vec<Ident>>,
    /// FOR READ ONLY
    pub read_only: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct CursorRef {
    pub global: bool,
    pub name: NameRef,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Fetch {
    pub direction: Option<FetchDirection>,
    pub cursor: CursorRef,
    pub into: Vec<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum FetchDirection {
    Next,
    Prior,
    First,
    Last,
    Absolute(Expr),
    Relative(Expr),
}

#[derive(Debug, Clone, PartialEq)]
pub enum SetOption {
    /// ON/OFF options, several at once: `SET ANSI_NULLS, QUOTED_IDENTIFIER ON`. Names are
    /// upper-cased; two-word options are "STATISTICS IO", "STATISTICS TIME", ...
    Flags { names: Vec<String>, on: bool },
    /// SET TRANSACTION ISOLATION LEVEL ...
    IsolationLevel(IsolationLevel),
    /// SET IDENTITY_INSERT t ON|OFF
    IdentityInsert { table: ObjectName, on: bool },
    /// Options with a value: DATEFORMAT, DATEFIRST, LANGUAGE, LOCK_TIMEOUT,
    /// DEADLOCK_PRIORITY, TEXTSIZE, ROWCOUNT, CONTEXT_INFO, QUERY_GOVERNOR_COST_LIMIT
    /// (name upper-cased).
    Value { name: String, value: SetValue },
}

#[derive(Debug, Clone, PartialEq)]
pub enum SetValue {
    /// A bare word: `dmy`, `us_english`, `LOW`.
    Word(Ident),
    Expr(Expr),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IsolationLevel {
    ReadUncommitted,
    ReadCommitted,
    RepeatableRead,
    Snapshot,
    Serializable,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ThrowArgs {
    pub number: Expr,
    pub message: Expr,
    pub state: Expr,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Raiserror {
    /// A message number, string or variable.
    pub message: Expr,
    pub severity: Expr,
    pub state: Expr,
    pub args: Vec<Expr>,
    pub options: Vec<RaiserrorOption>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RaiserrorOption {
    Log,
    NoWait,
    SetError,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitForKind {
    Delay,
    Time,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ProcedureRef {
    Name(ObjectName),
    /// EXEC @module_name_variable
    Variable(String),
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExecProcedure {
    /// EXEC @rc = proc
    pub return_status: Option<String>,
    pub procedure: ProcedureRef,
    pub args: Vec<ExecArg>,
    /// WITH RECOMPILE
    pub recompile: bool,
}

/// `[@name =] value [OUTPUT]`. The value is a literal, a variable, DEFAULT
/// ([`ExprKind::Default`]) or a bare word, which T-SQL passes as a string
/// (`EXEC sp_helpdb master`): the binder reads a one-part [`ExprKind::Column`] here as a
/// string.
#[derive(Debug, Clone, PartialEq)]
pub struct ExecArg {
    pub name: Option<String>,
    pub value: Expr,
    pub output: bool,
}

#[derive(Debug, Clone, PartialEq)]
pub struct ExecString {
    pub sql: Expr,
    /// AS LOGIN = ... / AS USER = ...
    pub context: Option<ExecuteAs>,
    /// AT linked_server
    pub at_server: Option<Ident>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExecuteAs {
    Caller,
    Login(Expr),
    User(Expr),
}

// ---------------------------------------------------------------------------------------
// DBCC, BACKUP, RESTORE, Extended Events
// ---------------------------------------------------------------------------------------

/// `DBCC NAME [(args)] [WITH options]`. Arguments are expressions; bare words
/// (`LOGSPACE`, `NOINDEX`, `REPAIR_REBUILD`, a database name) are one-part
/// [`ExprKind::Column`]s.
#[derive(Debug, Clone, PartialEq)]
pub struct Dbcc {
    /// Upper-cased: CHECKDB, SQLPERF, TRACEON, ...
    pub command: String,
    pub args: Vec<Expr>,
    pub options: Vec<OptionItem>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackupKind {
    Database,
    Log,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceKind {
    Disk,
    Tape,
    Url,
}

#[derive(Debug, Clone, PartialEq)]
pub enum BackupDevice {
    /// DISK = 'path' (and TAPE, URL).
    File { kind: DeviceKind, path: Expr },
    /// A logical backup device name.
    Logical(NameRef),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Backup {
    pub kind: BackupKind,
    pub database: NameRef,
    pub to: Vec<BackupDevice>,
    pub options: Vec<BackupOption>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum BackupOption {
    /// CHECKSUM (true) / NO_CHECKSUM
    Checksum(bool),
    /// COMPRESSION / NO_COMPRESSION
    Compression(bool),
    CopyOnly,
    /// INIT / NOINIT
    Init(bool),
    /// FORMAT / NOFORMAT
    Format(bool),
    Differential,
    /// STATS [= n]
    Stats(Option<Expr>),
    BufferCount(Expr),
    MaxTransferSize(Expr),
    BlockSize(Expr),
    Name(Expr),
    Description(Expr),
    /// CONTINUE_AFTER_ERROR (true) / STOP_ON_ERROR
    ContinueAfterError(bool),
    Other(OptionItem),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RestoreKind {
    Database,
    Log,
    VerifyOnly,
    HeaderOnly,
    FileListOnly,
    LabelOnly,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Restore {
    pub kind: RestoreKind,
    /// The database (RESTORE DATABASE/LOG only).
    pub database: Option<NameRef>,
    pub from: Vec<BackupDevice>,
    pub options: Vec<RestoreOption>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RestoreOption {
    /// MOVE 'logical' TO 'physical'
    Move {
        logical: Expr,
        physical: Expr,
    },
    Replace,
    Recovery,
    NoRecovery,
    Standby(Expr),
    StopAt(Expr),
    Stats(Option<Expr>),
    File(Expr),
    Checksum(bool),
    ContinueAfterError(bool),
    Other(OptionItem),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventSessionScope {
    Server,
    Database,
}

#[derive(Debug, Clone, PartialEq)]
pub struct EventSession {
    /// false: CREATE EVENT SESSION; true: ALTER EVENT SESSION.
    pub alter: bool,
    pub name: Ident,
    pub scope: EventSessionScope,
    pub clauses: Vec<EventSessionClause>,
    /// WITH (MAX_MEMORY = 4 MB, EVENT_RETENTION_MODE = ..., TRACK_CAUSALITY = ON, ...)
    pub options: Vec<OptionItem>,
    /// ALTER ... STATE = START (true) | STOP (false)
    pub state: Option<bool>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum EventSessionClause {
    AddEvent(XeEvent),
    DropEvent(ObjectName),
    AddTarget(XeTarget),
    DropTarget(ObjectName),
}

#[derive(Debug, Clone, PartialEq)]
pub struct XeEvent {
    /// package.event
    pub name: ObjectName,
    /// SET field = value, ...
    pub set: Vec<(Ident, Expr)>,
    /// ACTION (package.action, ...)
    pub actions: Vec<ObjectName>,
    /// WHERE predicate
    pub predicate: Option<Expr>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct XeTarget {
    /// package.target
    pub name: ObjectName,
    pub set: Vec<(Ident, Expr)>,
}

// ---------------------------------------------------------------------------------------
// Security
// ---------------------------------------------------------------------------------------

#[derive(Debug, Clone, PartialEq)]
pub enum LoginOption {
    /// `PASSWORD = 'x' [HASHED] [MUST_CHANGE]`, with OLD_PASSWORD / UNLOCK for ALTER LOGIN.
    Password {
        value: Expr,
        hashed: bool,
        must_change: bool,
        unlock: bool,
        old_password: Option<Expr>,
    },
    Other(OptionItem),
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreateLogin {
    pub name: Ident,
    /// FROM WINDOWS
    pub windows: bool,
    pub options: Vec<LoginOption>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct AlterLogin {
    pub name: Ident,
    pub action: AlterLoginAction,
}

#[derive(Debug, Clone, PartialEq)]
pub enum AlterLoginAction {
    Enable,
    Disable,
    With(Vec<LoginOption>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct CreateUser {
    pub name: Ident,
    /// FOR LOGIN / FROM LOGIN
    pub login: Option<Ident>,
    pub without_login: bool,
    pub options: Vec<OptionItem>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermissionAction {
    Grant,
    Deny,
    Revoke,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Permission {
    pub action: PermissionAction,
    /// REVOKE GRANT OPTION FOR ...
    pub grant_option_for: bool,
    /// Upper-cased, space separated: "SELECT", "VIEW SERVER STATE", "ALTER ANY EVENT SESSION".
    pub permissions: Vec<String>,
    pub on: Option<Securable>,
    pub principals: Vec<Ident>,
    pub with_grant_option: bool,
    pub cascade: bool,
    pub as_principal: Option<Ident>,
}

/// `[class::]name`: OBJECT::dbo.t, SCHEMA::dbo, DATABASE::db, or a bare object name.
#[derive(Debug, Clone, PartialEq)]
pub struct Securable {
    /// Upper-cased class (OBJECT, SCHEMA, DATABASE, LOGIN, ...).
    pub class: Option<String>,
    pub name: ObjectName,
}

/// Visits an expression tree, not descending into subqueries.
pub fn walk_expr(e: &Expr, f: &mut dyn FnMut(&Expr)) {
    f(e);
    match &e.kind {
        ExprKind::Unary { expr, .. } | ExprKind::IsNull { expr, .. } | ExprKind::Collate { expr, .. } => {
            walk_expr(expr, f)
        }
        ExprKind::Cast { expr, .. } | ExprKind::Parse { expr, .. } => walk_expr(expr, f),
        ExprKind::Convert { expr, style, .. } => {
            walk_expr(expr, f);
            if let Some(s) = style {
                walk_expr(s, f);
            }
        }
        ExprKind::Binary { left, right, .. } => {
            walk_expr(left, f);
            walk_expr(right, f);
        }
        ExprKind::AtTimeZone { expr, zone } => {
            walk_expr(expr, f);
            walk_expr(zone, f);
        }
        ExprKind::Like { expr, pattern, escape, .. } => {
            walk_expr(expr, f);
            walk_expr(pattern, f);
            if let Some(e) = escape {
                walk_expr(e, f);
            }
        }
        ExprKind::Between { expr, low, high, .. } => {
            walk_expr(expr, f);
            walk_expr(low, f);
            walk_expr(high, f);
        }
        ExprKind::InList { expr, list, .. } => {
            walk_expr(expr, f);
            list.iter().for_each(|e| walk_expr(e, f));
        }
        ExprKind::InSubquery { expr, .. } => walk_expr(expr, f),
        ExprKind::Quantified { left, .. } => walk_expr(left, f),
        ExprKind::Case(c) => {
            if let Some(o) = &c.operand {
                walk_expr(o, f);
            }
            for (w, t) in &c.branches {
                walk_expr(w, f);
                walk_expr(t, f);
            }
            if let Some(e) = &c.else_result {
                walk_expr(e, f);
            }
        }
        ExprKind::Function(call) => {
            // Arguments of aggregates are visited too (nested aggregates are an error
            // the binder reports).
            call.args.iter().for_each(|e| walk_expr(e, f));
        }
        ExprKind::MethodCall { target, args, .. } => {
            walk_expr(target, f);
            args.iter().for_each(|e| walk_expr(e, f));
        }
        ExprKind::StaticMethodCall { args, .. } => args.iter().for_each(|e| walk_expr(e, f)),
        _ => {}
    }
}

/// Like [`walk_expr`], with mutable access (used to rewrite column references).
pub fn walk_expr_mut(e: &mut Expr, f: &mut dyn FnMut(&mut Expr)) {
    f(e);
    match &mut e.kind {
        ExprKind::Unary { expr, .. } | ExprKind::IsNull { expr, .. } | ExprKind::Collate { expr, .. } => {
            walk_expr_mut(expr, f)
        }
        ExprKind::Cast { expr, .. } | ExprKind::Parse { expr, .. } => walk_expr_mut(expr, f),
        ExprKind::Convert { expr, style, .. } => {
            walk_expr_mut(expr, f);
            if let Some(s) = style {
                walk_expr_mut(s, f);
            }
        }
        ExprKind::Binary { left, right, .. } => {
            walk_expr_mut(left, f);
            walk_expr_mut(right, f);
        }
        ExprKind::AtTimeZone { expr, zone } => {
            walk_expr_mut(expr, f);
            walk_expr_mut(zone, f);
        }
        ExprKind::Like { expr, pattern, escape, .. } => {
            walk_expr_mut(expr, f);
            walk_expr_mut(pattern, f);
            if let Some(e) = escape {
                walk_expr_mut(e, f);
            }
        }
        ExprKind::Between { expr, low, high, .. } => {
            walk_expr_mut(expr, f);
            walk_expr_mut(low, f);
            walk_expr_mut(high, f);
        }
        ExprKind::InList { expr, list, .. } => {
            walk_expr_mut(expr, f);
            list.iter_mut().for_each(|e| walk_expr_mut(e, f));
        }
        ExprKind::InSubquery { expr, .. } => walk_expr_mut(expr, f),
        ExprKind::Quantified { left, .. } => walk_expr_mut(left, f),
        ExprKind::Case(c) => {
            if let Some(o) = &mut c.operand {
                walk_expr_mut(o, f);
            }
            for (w, t) in &mut c.branches {
                walk_expr_mut(w, f);
                walk_expr_mut(t, f);
            }
            if let Some(e) = &mut c.else_result {
                walk_expr_mut(e, f);
            }
        }
        ExprKind::Function(call) => call.args.iter_mut().for_each(|e| walk_expr_mut(e, f)),
        ExprKind::MethodCall { target, args, .. } => {
            walk_expr_mut(target, f);
            args.iter_mut().for_each(|e| walk_expr_mut(e, f));
        }
        ExprKind::StaticMethodCall { args, .. } => args.iter_mut().for_each(|e| walk_expr_mut(e, f)),
        _ => {}
    }
}
