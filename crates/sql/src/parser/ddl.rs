//! CREATE / ALTER / DROP: databases, schemas, tables, indexes, procedures, views,
//! functions, DML triggers, logins, users, roles (event sessions are in `admin`). Object
//! kinds the AST does not model (DDL triggers, TYPE, SEQUENCE, SYNONYM, ROLE, STATISTICS, ...) are kept as
//! [`StatementKind::Other`].

use super::{Capture, PResult, Parser};
use crate::ast::*;
use crate::errors;
use crate::lexer::TokenKind;

/// ALTER DATABASE ... SET options that take no value.
const VALUELESS_DB_OPTIONS: &[&str] = &["ENABLE_BROKER", "DISABLE_BROKER", "NEW_BROKER", "ERROR_BROKER_CONVERSATIONS"];

impl<'a> Parser<'a> {
    // -----------------------------------------------------------------------------------
    // Dispatch
    // -----------------------------------------------------------------------------------

    pub(crate) fn parse_create(&mut self) -> PResult<StatementKind> {
        let start = self.pos;
        self.expect_word("CREATE")?;
        let mode = if self.is_word("OR") && self.is_word_at(1, "ALTER") {
            self.advance();
            self.advance();
            CreateMode::CreateOrAlter
        } else {
            CreateMode::Create
        };
        if let Some(kind) = self.parse_module(start, mode)? {
            return Ok(kind);
        }
        if mode == CreateMode::CreateOrAlter {
            return Err(self.error());
        }
        if self.eat_word("DATABASE") {
            return self.parse_create_database();
        }
        if self.eat_word("TABLE") {
            return self.parse_create_table();
        }
        if self.eat_word("SEQUENCE") {
            return self.parse_sequence(false);
        }
        if self.is_any_word(&["UNIQUE", "CLUSTERED", "NONCLUSTERED", "INDEX", "COLUMNSTORE"]) {
            return self.parse_create_index();
        }
        // These start their batch too (SQL Server's rules for batches), as modules do.
        if self.is_any_word(&["SCHEMA", "RULE", "DEFAULT"]) && self.stmt_nesting > 0 {
            return Err(self.error());
        }
        if self.is_any_word(&["SCHEMA", "RULE", "DEFAULT"]) && !self.first_in_batch() {
            let what = format!("CREATE {}", self.text().to_ascii_uppercase());
            return Err(errors::must_be_first_in_batch(&what, self.toks[start].span.line));
        }
        if self.eat_word("SCHEMA") {
            let name = self.parse_ident()?;
            let authorization = if self.eat_word("AUTHORIZATION") { Some(self.parse_ident()?) } else { None };
            return Ok(StatementKind::CreateSchema { name, authorization });
        }
        if self.eat_word("LOGIN") {
            return self.parse_create_login();
        }
        if self.eat_word("USER") {
            return self.parse_create_user();
        }
        if self.eat_word("ROLE") {
            let name = self.parse_ident()?;
            let authorization = if self.eat_word("AUTHORIZATION") { Some(self.parse_ident()?) } else { None };
            return Ok(StatementKind::CreateRole { name, authorization });
        }
        if self.is_word("EVENT") && self.is_word_at(1, "SESSION") {
            return self.parse_event_session(false);
        }
        if self.eat_word("TYPE") {
            return self.parse_create_type();
        }
        self.capture_unknown(start, "CREATE")
    }

    pub(crate) fn parse_alter(&mut self) -> PResult<StatementKind> {
        let start = self.pos;
        self.expect_word("ALTER")?;
        if let Some(kind) = self.parse_module(start, CreateMode::Alter)? {
            return Ok(kind);
        }
        if self.eat_word("DATABASE") {
            return self.parse_alter_database();
        }
        if self.eat_word("TABLE") {
            return self.parse_alter_table();
        }
        if self.eat_word("INDEX") {
            return self.parse_alter_index();
        }
        if self.eat_word("SEQUENCE") {
            return self.parse_sequence(true);
        }
        if self.eat_word("LOGIN") {
            return self.parse_alter_login();
        }
        if self.is_word("EVENT") && self.is_word_at(1, "SESSION") {
            return self.parse_event_session(true);
        }
        // [SERVER] ROLE name {ADD | DROP} MEMBER member
        let server = self.is_word("SERVER") && self.is_word_at(1, "ROLE");
        let at = if server { 2 } else { 1 };
        if (server || self.is_word("ROLE"))
            && matches!(self.kind_at(at), TokenKind::Word | TokenKind::Keyword | TokenKind::QuotedIdent { .. })
            && self.is_any_word_at(at + 1, &["ADD", "DROP"])
            && self.is_word_at(at + 2, "MEMBER")
        {
            if server {
                self.advance();
            }
            self.advance();
            let role = self.parse_ident_or_keyword()?;
            let add = self.eat_word("ADD");
            if !add {
                self.expect_word("DROP")?;
            }
            self.expect_word("MEMBER")?;
            let member = self.parse_ident()?;
            return Ok(StatementKind::AlterRole { server, role, add, member });
        }
        self.capture_unknown(start, "ALTER")
    }

    pub(crate) fn parse_drop(&mut self) -> PResult<StatementKind> {
        let start = self.pos;
        self.expect_word("DROP")?;
        if self.eat_word("INDEX") {
            let if_exists = self.parse_if_exists();
            let mut indexes = Vec::new();
            loop {
                let index = self.parse_object_name()?;
                let table = if self.eat_word("ON") { Some(self.parse_object_name()?) } else { None };
                indexes.push(DropIndexItem { index, table });
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            return Ok(StatementKind::DropIndex { if_exists, indexes });
        }
        if self.is_word("EVENT") && self.is_word_at(1, "SESSION") {
            self.advance();
            self.advance();
            let name = self.parse_ident()?;
            self.expect_word("ON")?;
            let scope = self.parse_event_session_scope()?;
            return Ok(StatementKind::Drop {
                kind: DropKind::EventSession(scope),
                if_exists: false,
                names: vec![ObjectName::from_ident(name)],
            });
        }
        let kind = match self.text().to_ascii_uppercase().as_str() {
            "TABLE" => DropKind::Table,
            "VIEW" => DropKind::View,
            "PROC" | "PROCEDURE" => DropKind::Procedure,
            "FUNCTION" => DropKind::Function,
            "TRIGGER" => DropKind::Trigger,
            "DATABASE" => DropKind::Database,
            "SCHEMA" => DropKind::Schema,
            "LOGIN" => DropKind::Login,
            "USER" => DropKind::User,
            "ROLE" => DropKind::Role,
            "TYPE" => DropKind::Type,
            "SEQUENCE" => DropKind::Sequence,
            "SYNONYM" => DropKind::Synonym,
            _ => return self.capture_unknown(start, "DROP"),
        };
        self.advance();
        let if_exists = self.parse_if_exists();
        let mut names = vec![self.parse_object_name()?];
        while self.eat(&TokenKind::Comma) {
            names.push(self.parse_object_name()?);
        }
        if kind == DropKind::Trigger && self.is_word("ON") {
            // DROP TRIGGER t ON DATABASE / ALL SERVER (DDL triggers): not modelled.
            return self.capture_other(start, "DROP TRIGGER", Capture::Heuristic);
        }
        Ok(StatementKind::Drop { kind, if_exists, names })
    }

    fn parse_if_exists(&mut self) -> bool {
        if self.is_word("IF") && self.is_word_at(1, "EXISTS") {
            self.advance();
            self.advance();
            true
        } else {
            false
        }
    }

    /// CREATE / ALTER SEQUENCE name [options], after the keyword SEQUENCE: the options in
    /// any order, each once (11712); START WITH and AS only in CREATE (11710, 11711),
    /// RESTART only in ALTER (11709), ALTER with at least one (11715).
    fn parse_sequence(&mut self, alter: bool) -> PResult<StatementKind> {
        let mut def = SequenceDef { name: self.parse_object_name()?, ..Default::default() };
        let mut seen: Vec<&'static str> = Vec::new();
        let sequence_error = |p: &Self, number: i32, message: String| {
            let mut e = p.error();
            e.number = number;
            e.message = message;
            e
        };
        loop {
            let arg: &'static str = if self.is_word("AS") {
                "AS"
            } else if self.is_word("START") && self.is_word_at(1, "WITH") {
                "START WITH"
            } else if self.is_word("RESTART") {
                "RESTART"
            } else if self.is_word("INCREMENT") && self.is_word_at(1, "BY") {
                "INCREMENT BY"
            } else if self.is_word("MINVALUE") || (self.is_word("NO") && self.is_word_at(1, "MINVALUE")) {
                "MINVALUE"
            } else if self.is_word("MAXVALUE") || (self.is_word("NO") && self.is_word_at(1, "MAXVALUE")) {
                "MAXVALUE"
            } else if self.is_word("CYCLE") || (self.is_word("NO") && self.is_word_at(1, "CYCLE")) {
                "CYCLE"
            } else if self.is_word("CACHE") || (self.is_word("NO") && self.is_word_at(1, "CACHE")) {
                "CACHE"
            } else {
                break;
            };
            match arg {
                "AS" if alter => {
                    return Err(sequence_error(
                        self,
                        11711,
                        "Argument 'AS' cannot be used in an ALTER SEQUENCE statement.".into(),
                    ))
                }
                "START WITH" if alter => {
                    return Err(sequence_error(
                        self,
                        11710,
                        "Argument 'START WITH' cannot be used in an ALTER SEQUENCE statement.".into(),
                    ))
                }
                "RESTART" if !alter => {
                    return Err(sequence_error(
                        self,
                        11709,
                        "The 'RESTART WITH' argument cannot be used in a CREATE SEQUENCE statement.".into(),
                    ))
                }
                _ => {}
            }
            if seen.contains(&arg) {
                return Err(sequence_error(
                    self,
                    11712,
                    format!("Argument '{arg}' can not be specified more than once."),
                ));
            }
            seen.push(arg);
            let no = self.eat_word("NO");
            match arg {
                "AS" => {
                    self.advance();
                    def.data_type = Some(self.parse_data_type()?);
                }
                "START WITH" => {
                    self.advance();
                    self.advance();
                    def.start = Some(self.parse_simple_value()?);
                }
                "RESTART" => {
                    self.advance();
                    def.restart = Some(if self.eat_word("WITH") { Some(self.parse_simple_value()?) } else { None });
                }
                "INCREMENT BY" => {
                    self.advance();
                    self.advance();
                    def.increment = Some(self.parse_simple_value()?);
                }
                "MINVALUE" => {
                    self.advance();
                    def.min = Some(if no { None } else { Some(self.parse_simple_value()?) });
                }
                "MAXVALUE" => {
                    self.advance();
                    def.max = Some(if no { None } else { Some(self.parse_simple_value()?) });
                }
                "CYCLE" => {
                    self.advance();
                    def.cycle = Some(!no);
                }
                _ => {
                    self.advance();
                    def.cache = Some(if no {
                        SequenceCache::None
                    } else if self.kind().is_constant() {
                        SequenceCache::Size(self.parse_simple_value()?)
                    } else {
                        SequenceCache::Default
                    });
                }
            }
        }
        if alter && seen.is_empty() {
            return Err(sequence_error(self, 11715, "No properties specified for ALTER SEQUENCE.".into()));
        }
        Ok(StatementKind::Sequence { alter, def: Box::new(def) })
    }

    /// An unmodelled CREATE/ALTER/DROP: named by its first two words. The object kind is
    /// a non-reserved word (TYPE, SEQUENCE, ROLE, ...) or one of the few reserved words
    /// that name object kinds; anything else (`CREATE SELECT`) is a syntax error.
    fn capture_unknown(&mut self, start: usize, verb: &str) -> PResult<StatementKind> {
        const RESERVED_KINDS: &[&str] = &["STATISTICS", "AUTHORIZATION", "RULE", "DEFAULT", "SCHEMA", "EXTERNAL"];
        if !(matches!(self.kind(), TokenKind::Word) || self.is_any_word(RESERVED_KINDS)) {
            return Err(self.error());
        }
        let keyword = format!("{verb} {}", self.text().to_ascii_uppercase());
        self.advance();
        self.capture_other(start, &keyword, Capture::Heuristic)
    }

    // -----------------------------------------------------------------------------------
    // Modules: procedures, views, functions, triggers
    // -----------------------------------------------------------------------------------

    /// PROCEDURE / VIEW / FUNCTION / TRIGGER after CREATE, ALTER or CREATE OR ALTER; None
    /// for any other object kind.
    fn parse_module(&mut self, start: usize, mode: CreateMode) -> PResult<Option<StatementKind>> {
        let verb = match mode {
            CreateMode::Alter => "ALTER",
            _ => "CREATE",
        };
        let what = if self.is_any_word(&["PROC", "PROCEDURE"]) {
            "CREATE/ALTER PROCEDURE".to_string()
        } else if self.is_any_word(&["VIEW", "FUNCTION", "TRIGGER"]) {
            format!("{verb} {}", self.text().to_ascii_uppercase())
        } else {
            return Ok(None);
        };
        // Inside IF/ELSE/WHILE/BEGIN...END/TRY/CATCH or a module's body SQL Server's
        // grammar has no place for them: 156 at the object's keyword. 111 is for one
        // that follows another statement of the batch.
        if self.stmt_nesting > 0 {
            return Err(self.error());
        }
        if !self.first_in_batch() {
            return Err(errors::must_be_first_in_batch(&what, self.toks[start].span.line));
        }
        let kw = self.take_word_upper()?;
        Ok(Some(match kw.as_str() {
            "PROC" | "PROCEDURE" => self.parse_procedure(mode)?,
            "VIEW" => self.parse_view(mode)?,
            "FUNCTION" => self.parse_function(mode)?,
            _ => match self.parse_trigger(mode)? {
                Some(t) => t,
                None => {
                    // DDL (ON DATABASE / ALL SERVER) and LOGON triggers: not modelled.
                    let keyword = if mode == CreateMode::Alter { "ALTER TRIGGER" } else { "CREATE TRIGGER" };
                    self.capture_other(start, keyword, Capture::ToEndOfBatch)?
                }
            },
        }))
    }

    /// CREATE TRIGGER name ON table [WITH options] {FOR | AFTER | INSTEAD OF}
    /// {[INSERT] [,] [UPDATE] [,] [DELETE]} [WITH APPEND] [NOT FOR REPLICATION] AS body.
    /// None (nothing consumed) for a DDL or LOGON trigger.
    fn parse_trigger(&mut self, mode: CreateMode) -> PResult<Option<StatementKind>> {
        let save = self.pos;
        let name = self.parse_object_name()?;
        self.expect_word("ON")?;
        if self.is_word("DATABASE") || (self.is_word("ALL") && self.is_word_at(1, "SERVER")) {
            self.pos = save;
            return Ok(None);
        }
        let table = self.parse_object_name()?;
        let options = self.parse_module_options()?;
        let (timing, written_for) = if self.eat_word("FOR") {
            (TriggerTiming::After, true)
        } else if self.eat_word("AFTER") {
            (TriggerTiming::After, false)
        } else if self.is_word("INSTEAD") && self.is_word_at(1, "OF") {
            self.advance();
            self.advance();
            (TriggerTiming::InsteadOf, false)
        } else {
            return Err(self.error());
        };
        let (mut insert, mut update, mut delete) = (false, false, false);
        loop {
            let action = self.pos;
            let seen = if self.eat_word("INSERT") {
                std::mem::replace(&mut insert, true)
            } else if self.eat_word("UPDATE") {
                std::mem::replace(&mut update, true)
            } else if self.eat_word("DELETE") {
                std::mem::replace(&mut delete, true)
            } else {
                return Err(self.error());
            };
            if seen {
                let mut e = self.error_at(action);
                e.number = 1034;
                e.message = format!(
                    "Syntax error: Duplicate specification of the action \"{}\" in the trigger declaration.",
                    self.text_of(&self.toks[action]).to_ascii_uppercase()
                );
                return Err(e);
            }
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        if self.is_word("WITH") && self.is_word_at(1, "APPEND") {
            self.advance();
            self.advance();
        }
        let not_for_replication = if self.is_word("NOT") && self.is_word_at(1, "FOR") {
            self.advance();
            self.advance();
            self.expect_word("REPLICATION")?;
            true
        } else {
            false
        };
        let (body, body_span) = self.parse_module_body()?;
        Ok(Some(StatementKind::CreateTrigger(Box::new(CreateTrigger {
            mode,
            name,
            table,
            options,
            timing,
            written_for,
            insert,
            update,
            delete,
            not_for_replication,
            body,
            body_span,
        }))))
    }

    fn parse_procedure(&mut self, mode: CreateMode) -> PResult<StatementKind> {
        let name = self.parse_object_name()?;
        let params = if self.is(&TokenKind::LParen) {
            self.advance();
            let params = if self.is(&TokenKind::RParen) { Vec::new() } else { self.parse_parameters()? };
            self.expect(&TokenKind::RParen)?;
            params
        } else if self.is(&TokenKind::Variable) {
            self.parse_parameters()?
        } else {
            Vec::new()
        };
        let options = self.parse_module_options()?;
        let for_replication = if self.is_word("FOR") && self.is_word_at(1, "REPLICATION") {
            self.advance();
            self.advance();
            true
        } else {
            false
        };
        let (body, body_span) = self.parse_module_body()?;
        Ok(StatementKind::CreateProcedure(Box::new(CreateProcedure {
            mode,
            name,
            params,
            options,
            for_replication,
            body,
            body_span,
        })))
    }

    fn parse_parameters(&mut self) -> PResult<Vec<Parameter>> {
        let mut params = Vec::new();
        loop {
            let name = self.take_variable()?;
            self.eat_word("AS");
            let data_type = if self.is_word("CURSOR") {
                self.advance();
                DataType { name: ObjectName::from_ident(Ident::plain("CURSOR")), args: Vec::new() }
            } else {
                self.parse_data_type()?
            };
            let varying = self.eat_word("VARYING");
            let default = if self.eat(&TokenKind::Eq) {
                Some(if self.is_ident() {
                    // A bare word default is a string, as in EXEC arguments.
                    let span = self.peek().span;
                    Expr { kind: ExprKind::Column(ObjectName::from_ident(self.parse_ident()?)), span }
                } else {
                    self.parse_simple_value()?
                })
            } else {
                None
            };
            let output = self.eat_word("OUTPUT") || self.eat_word("OUT");
            let readonly = self.eat_word("READONLY");
            params.push(Parameter { name, data_type, varying, default, output, readonly });
            if !self.eat(&TokenKind::Comma) {
                return Ok(params);
            }
        }
    }

    fn parse_module_options(&mut self) -> PResult<Vec<ModuleOption>> {
        let mut options = Vec::new();
        if !self.eat_word("WITH") {
            return Ok(options);
        }
        loop {
            let opt = if self.is_any_word(&["EXECUTE", "EXEC"]) {
                self.advance();
                self.expect_word("AS")?;
                let principal = if self.eat_word("CALLER") {
                    ExecuteAsPrincipal::Caller
                } else if self.eat_word("SELF") {
                    ExecuteAsPrincipal::SelfPrincipal
                } else if self.eat_word("OWNER") {
                    ExecuteAsPrincipal::Owner
                } else {
                    ExecuteAsPrincipal::User(self.parse_simple_value()?)
                };
                ModuleOption::ExecuteAs(principal)
            } else if self.is_word("RETURNS") {
                self.advance();
                self.expect_word("NULL")?;
                self.expect_word("ON")?;
                self.expect_word("NULL")?;
                self.expect_word("INPUT")?;
                ModuleOption::ReturnsNullOnNullInput
            } else if self.is_word("CALLED") {
                self.advance();
                self.expect_word("ON")?;
                self.expect_word("NULL")?;
                self.expect_word("INPUT")?;
                ModuleOption::CalledOnNullInput
            } else {
                let name = self.take_word_upper()?;
                match name.as_str() {
                    "ENCRYPTION" => ModuleOption::Encryption,
                    "RECOMPILE" => ModuleOption::Recompile,
                    "SCHEMABINDING" => ModuleOption::SchemaBinding,
                    "NATIVE_COMPILATION" => ModuleOption::NativeCompilation,
                    "VIEW_METADATA" => ModuleOption::ViewMetadata,
                    _ => ModuleOption::Other(self.parse_option_rest(name, false)?),
                }
            };
            options.push(opt);
            if !self.eat(&TokenKind::Comma) {
                return Ok(options);
            }
        }
    }

    /// After a view or function: only `;` may follow before the end of the batch.
    fn expect_end_of_batch(&mut self) -> PResult<()> {
        while self.eat(&TokenKind::Semicolon) {}
        if self.at_eof() {
            Ok(())
        } else {
            Err(self.error())
        }
    }

    fn parse_view(&mut self, mode: CreateMode) -> PResult<StatementKind> {
        let name = self.parse_object_name()?;
        let columns = if self.is(&TokenKind::LParen) { self.parse_paren_ident_list()? } else { Vec::new() };
        let options = self.parse_module_options()?;
        self.expect_word("AS")?;
        let body_start = self.pos;
        let query = self.parse_query()?;
        let check_option = if self.is_word("WITH") && self.is_word_at(1, "CHECK") {
            self.advance();
            self.advance();
            self.expect_word("OPTION")?;
            true
        } else {
            false
        };
        let body_span = self.span_from(body_start);
        self.expect_end_of_batch()?;
        Ok(StatementKind::CreateView(Box::new(CreateView {
            mode,
            name,
            columns,
            options,
            query: Box::new(query),
            check_option,
            body_span,
        })))
    }

    fn parse_function(&mut self, mode: CreateMode) -> PResult<StatementKind> {
        let name = self.parse_object_name()?;
        self.expect(&TokenKind::LParen)?;
        let params = if self.is(&TokenKind::RParen) { Vec::new() } else { self.parse_parameters()? };
        self.expect(&TokenKind::RParen)?;
        self.expect_word("RETURNS")?;
        let (returns, options, body_start) = if self.eat_word("TABLE") {
            let options = self.parse_module_options()?;
            self.eat_word("AS");
            let body_start = self.pos;
            self.expect_word("RETURN")?;
            let query = self.parse_query()?;
            (FunctionBody::InlineTable { query: Box::new(query) }, options, body_start)
        } else if self.is(&TokenKind::Variable) {
            let variable = self.take_variable()?;
            self.expect_word("TABLE")?;
            let elements = self.parse_table_elements()?;
            let options = self.parse_module_options()?;
            self.eat_word("AS");
            let body_start = self.pos;
            let body = self.parse_function_block()?;
            (FunctionBody::MultiStatement { variable, elements, body }, options, body_start)
        } else {
            let data_type = self.parse_data_type()?;
            let options = self.parse_module_options()?;
            self.eat_word("AS");
            let body_start = self.pos;
            let body = self.parse_function_block()?;
            (FunctionBody::Scalar { data_type, body }, options, body_start)
        };
        let body_span = self.span_from(body_start);
        self.expect_end_of_batch()?;
        Ok(StatementKind::CreateFunction(Box::new(CreateFunction { mode, name, params, returns, options, body_span })))
    }

    /// BEGIN ... END of a scalar or multi-statement function.
    fn parse_function_block(&mut self) -> PResult<Vec<Statement>> {
        self.expect_word("BEGIN")?;
        self.stmt_nesting += 1;
        let body = self.parse_block_until_end();
        self.stmt_nesting -= 1;
        let body = body?;
        self.expect_word("END")?;
        Ok(body)
    }

    // -----------------------------------------------------------------------------------
    // Databases
    // -----------------------------------------------------------------------------------

    fn parse_create_database(&mut self) -> PResult<StatementKind> {
        let name = self.parse_ident()?;
        let mut db = CreateDatabase {
            name,
            files: Vec::new(),
            filegroups: Vec::new(),
            log_files: Vec::new(),
            collation: None,
            options: Vec::new(),
            attach: None,
            snapshot_of: None,
        };
        if self.eat_word("ON") {
            self.eat_word("PRIMARY");
            let mut current: Option<Filegroup> = None;
            loop {
                if self.eat_word("FILEGROUP") {
                    if let Some(fg) = current.take() {
                        db.filegroups.push(fg);
                    }
                    let name = self.parse_ident()?;
                    let contains = if self.eat_word("CONTAINS") { Some(self.take_word_upper()?) } else { None };
                    let default = self.eat_word("DEFAULT");
                    current = Some(Filegroup { name, contains, default, files: Vec::new() });
                }
                let spec = self.parse_file_spec()?;
                match current.as_mut() {
                    Some(fg) => fg.files.push(spec),
                    None => db.files.push(spec),
                }
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            if let Some(fg) = current.take() {
                db.filegroups.push(fg);
            }
        }
        if self.is_word("LOG") && self.is_word_at(1, "ON") {
            self.advance();
            self.advance();
            db.log_files = self.parse_file_specs()?;
        }
        if self.eat_word("COLLATE") {
            db.collation = Some(self.parse_ident()?);
        }
        if self.is_word("AS") && self.is_word_at(1, "SNAPSHOT") {
            self.advance();
            self.advance();
            self.expect_word("OF")?;
            db.snapshot_of = Some(self.parse_ident()?);
        }
        if self.eat_word("WITH") {
            db.options = self.parse_option_list(true)?;
        }
        if self.is_word("FOR") && self.is_any_word_at(1, &["ATTACH", "ATTACH_REBUILD_LOG"]) {
            self.advance();
            db.attach = Some(self.take_word_upper()?);
        }
        Ok(StatementKind::CreateDatabase(Box::new(db)))
    }

    pub(crate) fn is_any_word_at(&self, n: usize, kws: &[&str]) -> bool {
        kws.iter().any(|k| self.is_word_at(n, k))
    }

    fn parse_file_specs(&mut self) -> PResult<Vec<FileSpec>> {
        let mut specs = vec![self.parse_file_spec()?];
        while self.eat(&TokenKind::Comma) {
            specs.push(self.parse_file_spec()?);
        }
        Ok(specs)
    }

    /// `( NAME = x, FILENAME = 'p', SIZE = 10MB, MAXSIZE = UNLIMITED, FILEGROWTH = 10% )`
    fn parse_file_spec(&mut self) -> PResult<FileSpec> {
        self.expect(&TokenKind::LParen)?;
        let mut spec = FileSpec::default();
        loop {
            let key_at = self.pos;
            let key = self.take_word_upper()?;
            if key == "OFFLINE" {
                spec.offline = true;
            } else {
                self.expect(&TokenKind::Eq)?;
                match key.as_str() {
                    "NAME" => spec.name = Some(self.parse_name_value()?),
                    "NEWNAME" => spec.new_name = Some(self.parse_name_value()?),
                    "FILENAME" => spec.filename = Some(self.parse_simple_value()?),
                    "SIZE" => spec.size = Some(self.parse_size()?),
                    "FILEGROWTH" => spec.file_growth = Some(self.parse_size()?),
                    "MAXSIZE" => {
                        spec.max_size = Some(if self.eat_word("UNLIMITED") {
                            MaxSize::Unlimited
                        } else {
                            MaxSize::Size(self.parse_size()?)
                        })
                    }
                    _ => return Err(self.error_at(key_at)),
                }
            }
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(&TokenKind::RParen)?;
        Ok(spec)
    }

    /// A logical name: `x`, `[x]` or `N'x'` (see [`Expr::as_name`]).
    fn parse_name_value(&mut self) -> PResult<Expr> {
        if self.is_ident() {
            let span = self.peek().span;
            let ident = self.parse_ident()?;
            return Ok(Expr { kind: ExprKind::Column(ObjectName::from_ident(ident)), span });
        }
        self.parse_simple_value()
    }

    /// `32768MB`, `10 %`, `1024` (no unit).
    fn parse_size(&mut self) -> PResult<Size> {
        if !self.is(&TokenKind::Integer) {
            return Err(self.error());
        }
        let value: u64 = self.text().parse().map_err(|_| self.error())?;
        self.advance();
        let unit = if self.eat(&TokenKind::Percent) {
            Some(SizeUnit::Percent)
        } else if self.eat_word("KB") {
            Some(SizeUnit::Kb)
        } else if self.eat_word("MB") {
            Some(SizeUnit::Mb)
        } else if self.eat_word("GB") {
            Some(SizeUnit::Gb)
        } else if self.eat_word("TB") {
            Some(SizeUnit::Tb)
        } else {
            None
        };
        Ok(Size { value, unit })
    }

    fn parse_alter_database(&mut self) -> PResult<StatementKind> {
        let database =
            if self.eat_word("CURRENT") { DatabaseRef::Current } else { DatabaseRef::Name(self.parse_ident()?) };
        let action = if self.eat_word("SET") {
            let mut options = Vec::new();
            loop {
                options.push(self.parse_database_option()?);
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            let mut termination = None;
            if self.eat_word("WITH") {
                termination = Some(if self.eat_word("NO_WAIT") {
                    Termination::NoWait
                } else {
                    self.expect_word("ROLLBACK")?;
                    if self.eat_word("IMMEDIATE") {
                        Termination::RollbackImmediate
                    } else {
                        self.expect_word("AFTER")?;
                        if !self.is(&TokenKind::Integer) {
                            return Err(self.error());
                        }
                        let seconds: u64 = self.text().parse().map_err(|_| self.error())?;
                        self.advance();
                        self.eat_word("SECONDS");
                        Termination::RollbackAfter { seconds }
                    }
                });
            }
            AlterDatabaseAction::Set { options, termination }
        } else if self.eat_word("MODIFY") {
            if self.eat_word("NAME") {
                self.expect(&TokenKind::Eq)?;
                AlterDatabaseAction::ModifyName(self.parse_ident()?)
            } else {
                self.expect_word("FILE")?;
                AlterDatabaseAction::ModifyFile(Box::new(self.parse_file_spec()?))
            }
        } else if self.eat_word("ADD") {
            if self.eat_word("FILEGROUP") {
                AlterDatabaseAction::AddFilegroup(self.parse_ident()?)
            } else {
                let log = self.eat_word("LOG");
                self.expect_word("FILE")?;
                let files = self.parse_file_specs()?;
                let filegroup = if !log && self.eat_word("TO") {
                    self.expect_word("FILEGROUP")?;
                    Some(self.parse_ident()?)
                } else {
                    None
                };
                AlterDatabaseAction::AddFiles { log, files, filegroup }
            }
        } else if self.eat_word("REMOVE") {
            if self.eat_word("FILEGROUP") {
                AlterDatabaseAction::RemoveFilegroup(self.parse_ident()?)
            } else {
                self.expect_word("FILE")?;
                AlterDatabaseAction::RemoveFile(self.parse_name_value()?)
            }
        } else if self.eat_word("COLLATE") {
            AlterDatabaseAction::Collate(self.parse_ident()?)
        } else {
            return Err(self.error());
        };
        Ok(StatementKind::AlterDatabase(Box::new(AlterDatabase { database, action })))
    }

    fn parse_database_option(&mut self) -> PResult<DatabaseOption> {
        let name_at = self.pos;
        let name = self.take_word_upper()?;
        let simple = match name.as_str() {
            "READ_ONLY" => Some(DatabaseOption::ReadOnly),
            "READ_WRITE" => Some(DatabaseOption::ReadWrite),
            "SINGLE_USER" => Some(DatabaseOption::SingleUser),
            "RESTRICTED_USER" => Some(DatabaseOption::RestrictedUser),
            "MULTI_USER" => Some(DatabaseOption::MultiUser),
            "ONLINE" => Some(DatabaseOption::Online),
            "OFFLINE" => Some(DatabaseOption::Offline),
            "EMERGENCY" => Some(DatabaseOption::Emergency),
            _ => None,
        };
        if let Some(opt) = simple {
            return Ok(opt);
        }
        match name.as_str() {
            "RECOVERY" => {
                self.eat(&TokenKind::Eq);
                let at = self.pos;
                Ok(DatabaseOption::Recovery(match self.take_word_upper()?.as_str() {
                    "SIMPLE" => RecoveryModel::Simple,
                    "FULL" => RecoveryModel::Full,
                    "BULK_LOGGED" => RecoveryModel::BulkLogged,
                    _ => return Err(self.error_at(at)),
                }))
            }
            "DELAYED_DURABILITY" => {
                self.eat(&TokenKind::Eq);
                let at = self.pos;
                Ok(DatabaseOption::DelayedDurability(match self.take_word_upper()?.as_str() {
                    "DISABLED" => DelayedDurability::Disabled,
                    "ALLOWED" => DelayedDurability::Allowed,
                    "FORCED" => DelayedDurability::Forced,
                    _ => return Err(self.error_at(at)),
                }))
            }
            "PAGE_VERIFY" => {
                self.eat(&TokenKind::Eq);
                let at = self.pos;
                Ok(DatabaseOption::PageVerify(match self.take_word_upper()?.as_str() {
                    "CHECKSUM" => PageVerify::Checksum,
                    "TORN_PAGE_DETECTION" => PageVerify::TornPageDetection,
                    "NONE" => PageVerify::None,
                    _ => return Err(self.error_at(at)),
                }))
            }
            "TARGET_RECOVERY_TIME" => {
                self.eat(&TokenKind::Eq);
                if !self.is(&TokenKind::Integer) {
                    return Err(self.error());
                }
                let value: u64 = self.text().parse().map_err(|_| self.error())?;
                self.advance();
                let unit = if self.eat_word("SECONDS") {
                    TimeUnit::Seconds
                } else {
                    self.expect_word("MINUTES")?;
                    TimeUnit::Minutes
                };
                Ok(DatabaseOption::TargetRecoveryTime { value, unit })
            }
            _ if VALUELESS_DB_OPTIONS.contains(&name.as_str()) => {
                Ok(DatabaseOption::Other(OptionItem { name, equals: false, value: None }))
            }
            _ => {
                let item = self.parse_option_rest(name, true)?;
                if item.value.is_none() {
                    // Every other ALTER DATABASE option takes a value (AUTO_CLOSE OFF, ...).
                    return Err(self.error_at(name_at + 1));
                }
                Ok(DatabaseOption::Other(item))
            }
        }
    }

    // -----------------------------------------------------------------------------------
    // Tables
    // -----------------------------------------------------------------------------------

    fn parse_create_table(&mut self) -> PResult<StatementKind> {
        let name = self.parse_object_name()?;
        let elements = self.parse_table_elements()?;
        let on = if self.eat_word("ON") { Some(self.parse_filegroup_ref()?) } else { None };
        let textimage_on = if self.eat_word("TEXTIMAGE_ON") { Some(self.parse_ident_or_keyword()?) } else { None };
        let options = if self.is_word("WITH") && self.is_at(1, &TokenKind::LParen) {
            self.advance();
            self.parse_paren_options()?
        } else {
            Vec::new()
        };
        Ok(StatementKind::CreateTable(Box::new(CreateTable { name, elements, on, textimage_on, options })))
    }

    /// `ON [PRIMARY]`, `ON fg`, `ON scheme(col)` (after ON).
    fn parse_filegroup_ref(&mut self) -> PResult<FilegroupRef> {
        let name = self.parse_ident_or_keyword()?;
        let partition_column = if self.is(&TokenKind::LParen) {
            self.advance();
            let c = self.parse_ident()?;
            self.expect(&TokenKind::RParen)?;
            Some(c)
        } else {
            None
        };
        Ok(FilegroupRef { name, partition_column })
    }

    /// `( column | constraint | INDEX ..., ... )`
    /// After `CREATE TYPE`: `name AS TABLE (elements)` or `name FROM base [NULL | NOT NULL]`.
    fn parse_create_type(&mut self) -> PResult<StatementKind> {
        let name = self.parse_object_name()?;
        let definition = if self.eat_word("FROM") {
            let base = self.parse_data_type()?;
            let nullable = self.parse_nullability();
            TypeDefinition::Alias { base, nullable }
        } else {
            self.expect_word("AS")?;
            self.expect_word("TABLE")?;
            TypeDefinition::Table(self.parse_table_elements()?)
        };
        Ok(StatementKind::CreateType(Box::new(CreateType { name, definition })))
    }

    /// `INSERT BULK table (column definitions) [WITH (options)]`.
    pub(crate) fn parse_insert_bulk(&mut self) -> PResult<StatementKind> {
        self.expect_word("INSERT")?;
        self.expect_word("BULK")?;
        let table = self.parse_object_name()?;
        let mut columns = Vec::new();
        if self.eat(&TokenKind::LParen) {
            loop {
                columns.push(self.parse_column_def()?);
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            self.expect(&TokenKind::RParen)?;
        }
        let mut options = Vec::new();
        if self.is_word("WITH") && self.is_at(1, &TokenKind::LParen) {
            self.advance();
            self.advance();
            loop {
                if self.is_word("ORDER") {
                    self.advance();
                    options.push(BulkOption::Order(self.parse_index_columns()?));
                } else {
                    let name = self.take_word_upper()?;
                    if self.eat(&TokenKind::Eq) {
                        options.push(BulkOption::Value(name, self.parse_simple_value()?));
                    } else {
                        options.push(BulkOption::Flag(name));
                    }
                }
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            self.expect(&TokenKind::RParen)?;
        }
        Ok(StatementKind::InsertBulk(Box::new(InsertBulk { table, columns, options })))
    }

    pub(crate) fn parse_table_elements(&mut self) -> PResult<Vec<TableElement>> {
        self.expect(&TokenKind::LParen)?;
        let mut elements = Vec::new();
        loop {
            elements.push(self.parse_table_element()?);
            if !self.eat(&TokenKind::Comma) {
                break;
            }
            // A trailing comma before `)` is accepted by SQL Server in CREATE TABLE.
            if self.is(&TokenKind::RParen) {
                break;
            }
        }
        self.expect(&TokenKind::RParen)?;
        Ok(elements)
    }

    fn parse_table_element(&mut self) -> PResult<TableElement> {
        if self.is_any_word(&["CONSTRAINT", "PRIMARY", "UNIQUE", "CHECK", "FOREIGN"]) {
            return Ok(TableElement::Constraint(self.parse_table_constraint()?));
        }
        if self.is_word("INDEX") {
            self.advance();
            let name = self.parse_ident()?;
            let unique = self.eat_word("UNIQUE");
            let clustered = self.parse_clustered();
            let columns = self.parse_index_columns()?;
            let options = if self.eat_word("WITH") { self.parse_paren_options()? } else { Vec::new() };
            return Ok(TableElement::Index(TableIndex { name, unique, clustered, columns, options }));
        }
        Ok(TableElement::Column(self.parse_column_def()?))
    }

    fn parse_clustered(&mut self) -> Option<bool> {
        if self.eat_word("CLUSTERED") {
            Some(true)
        } else if self.eat_word("NONCLUSTERED") {
            Some(false)
        } else {
            None
        }
    }

    /// `( col [ASC|DESC], ... )`
    fn parse_index_columns(&mut self) -> PResult<Vec<IndexColumn>> {
        self.expect(&TokenKind::LParen)?;
        let mut cols = Vec::new();
        loop {
            let name = self.parse_ident()?;
            let direction = if self.eat_word("ASC") {
                Some(SortDirection::Asc)
            } else if self.eat_word("DESC") {
                Some(SortDirection::Desc)
            } else {
                None
            };
            cols.push(IndexColumn { name, direction });
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        self.expect(&TokenKind::RParen)?;
        Ok(cols)
    }

    fn parse_column_def(&mut self) -> PResult<ColumnDef> {
        let name = self.parse_ident()?;
        let mut col = ColumnDef { name, data_type: None, computed: None, options: Vec::new() };
        if self.eat_word("AS") {
            let expr = self.parse_expr()?;
            let persisted = self.eat_word("PERSISTED");
            col.computed = Some(Computed { expr, persisted });
        } else {
            col.data_type = Some(self.parse_data_type()?);
        }
        loop {
            let constraint_name = if self.eat_word("CONSTRAINT") { Some(self.parse_ident()?) } else { None };
            let opt = if self.eat_word("DEFAULT") {
                ColumnOption::Default { name: constraint_name.clone(), expr: self.parse_expr()? }
            } else if self.is_word("PRIMARY") {
                self.advance();
                self.expect_word("KEY")?;
                let clustered = self.parse_clustered();
                let (options, on) = self.parse_index_tail()?;
                ColumnOption::PrimaryKey { name: constraint_name.clone(), clustered, options, on }
            } else if self.eat_word("UNIQUE") {
                let clustered = self.parse_clustered();
                let (options, on) = self.parse_index_tail()?;
                ColumnOption::Unique { name: constraint_name.clone(), clustered, options, on }
            } else if self.eat_word("CHECK") {
                let not_for_replication = self.parse_not_for_replication();
                self.expect(&TokenKind::LParen)?;
                let expr = self.parse_expr()?;
                self.expect(&TokenKind::RParen)?;
                ColumnOption::Check { name: constraint_name.clone(), expr, not_for_replication }
            } else if self.is_word("FOREIGN") || self.is_word("REFERENCES") {
                if self.eat_word("FOREIGN") {
                    self.expect_word("KEY")?;
                }
                let reference = self.parse_reference()?;
                ColumnOption::References { name: constraint_name.clone(), reference }
            } else if constraint_name.is_some() {
                return Err(self.constraint_syntax("COLUMN"));
            } else if self.is_word("NULL") {
                self.advance();
                ColumnOption::Null
            } else if self.is_word("NOT") && self.is_word_at(1, "NULL") {
                self.advance();
                self.advance();
                ColumnOption::NotNull
            } else if self.eat_word("IDENTITY") {
                let seed_increment = if self.is(&TokenKind::LParen) {
                    self.advance();
                    let seed = self.parse_simple_value()?;
                    self.expect(&TokenKind::Comma)?;
                    let inc = self.parse_simple_value()?;
                    self.expect(&TokenKind::RParen)?;
                    Some((seed, inc))
                } else {
                    None
                };
                let not_for_replication = self.parse_not_for_replication();
                ColumnOption::Identity { seed_increment, not_for_replication }
            } else if self.eat_word("COLLATE") {
                ColumnOption::Collate(self.parse_ident()?)
            } else if self.is_word("WITH") && self.is_word_at(1, "VALUES") {
                self.advance();
                self.advance();
                ColumnOption::WithValues
            } else if self.eat_word("SPARSE") {
                ColumnOption::Sparse
            } else if self.eat_word("ROWGUIDCOL") {
                ColumnOption::RowGuidCol
            } else if self.eat_word("FILESTREAM") {
                ColumnOption::Filestream
            } else if self.is_word("COLUMN_SET") {
                self.advance();
                self.expect_word("FOR")?;
                self.expect_word("ALL_SPARSE_COLUMNS")?;
                ColumnOption::ColumnSet
            } else if self.eat_word("INDEX") {
                let name = self.parse_ident()?;
                ColumnOption::Index { name, clustered: self.parse_clustered() }
            } else if self.eat_word("NOT") {
                // Only NULL (or FOR REPLICATION after IDENTITY/CHECK) may follow NOT.
                return Err(self.error());
            } else {
                return Ok(col);
            };
            col.options.push(opt);
        }
    }

    /// 142: CONSTRAINT name with no constraint after it (`kind` is TABLE or COLUMN).
    fn constraint_syntax(&self, kind: &str) -> types::SqlError {
        let mut e = self.error();
        e.number = 142;
        e.message = format!("Incorrect syntax for definition of the '{kind}' constraint.");
        e
    }

    fn parse_not_for_replication(&mut self) -> bool {
        if self.is_word("NOT") && self.is_word_at(1, "FOR") && self.is_word_at(2, "REPLICATION") {
            self.advance();
            self.advance();
            self.advance();
            true
        } else {
            false
        }
    }

    /// `[WITH (options)] [ON filegroup]` after a PRIMARY KEY or UNIQUE.
    fn parse_index_tail(&mut self) -> PResult<(Vec<OptionItem>, Option<FilegroupRef>)> {
        let options = if self.is_word("WITH") && self.is_at(1, &TokenKind::LParen) {
            self.advance();
            self.parse_paren_options()?
        } else {
            Vec::new()
        };
        let on = if self.is_word("ON") && !self.is_any_word_at(1, &["DELETE", "UPDATE"]) {
            self.advance();
            Some(self.parse_filegroup_ref()?)
        } else {
            None
        };
        Ok((options, on))
    }

    /// `REFERENCES t [(cols)] [ON DELETE a] [ON UPDATE a] [NOT FOR REPLICATION]`
    fn parse_reference(&mut self) -> PResult<Reference> {
        self.expect_word("REFERENCES")?;
        let table = self.parse_object_name()?;
        let columns = if self.is(&TokenKind::LParen) { self.parse_paren_ident_list()? } else { Vec::new() };
        let mut reference = Reference { table, columns, on_delete: None, on_update: None, not_for_replication: false };
        while self.is_word("ON") && self.is_any_word_at(1, &["DELETE", "UPDATE"]) {
            self.advance();
            let delete = self.take_word_upper()? == "DELETE";
            let action = if self.eat_word("CASCADE") {
                ReferentialAction::Cascade
            } else if self.eat_word("NO") {
                self.expect_word("ACTION")?;
                ReferentialAction::NoAction
            } else {
                self.expect_word("SET")?;
                if self.eat_word("NULL") {
                    ReferentialAction::SetNull
                } else {
                    self.expect_word("DEFAULT")?;
                    ReferentialAction::SetDefault
                }
            };
            if delete {
                reference.on_delete = Some(action);
            } else {
                reference.on_update = Some(action);
            }
        }
        reference.not_for_replication = self.parse_not_for_replication();
        Ok(reference)
    }

    fn parse_table_constraint(&mut self) -> PResult<TableConstraint> {
        let name = if self.eat_word("CONSTRAINT") { Some(self.parse_ident()?) } else { None };
        let kind = if self.is_word("PRIMARY") {
            self.advance();
            self.expect_word("KEY")?;
            let clustered = self.parse_clustered();
            let columns = self.parse_index_columns()?;
            let (options, on) = self.parse_index_tail()?;
            ConstraintKind::PrimaryKey { clustered, columns, options, on }
        } else if self.eat_word("UNIQUE") {
            let clustered = self.parse_clustered();
            let columns = self.parse_index_columns()?;
            let (options, on) = self.parse_index_tail()?;
            ConstraintKind::Unique { clustered, columns, options, on }
        } else if self.eat_word("FOREIGN") {
            self.expect_word("KEY")?;
            let columns = self.parse_paren_ident_list()?;
            let reference = self.parse_reference()?;
            ConstraintKind::ForeignKey { columns, reference }
        } else if self.eat_word("CHECK") {
            let not_for_replication = self.parse_not_for_replication();
            self.expect(&TokenKind::LParen)?;
            let expr = self.parse_expr()?;
            self.expect(&TokenKind::RParen)?;
            ConstraintKind::Check { expr, not_for_replication }
        } else if self.eat_word("DEFAULT") {
            let expr = self.parse_expr()?;
            self.expect_word("FOR")?;
            let column = self.parse_ident()?;
            ConstraintKind::Default { expr, column }
        } else if name.is_some() {
            return Err(self.constraint_syntax("TABLE"));
        } else {
            return Err(self.error());
        };
        Ok(TableConstraint { name, kind })
    }

    fn parse_alter_table(&mut self) -> PResult<StatementKind> {
        let name = self.parse_object_name()?;
        let with_check = if self.is_word("WITH") && self.is_any_word_at(1, &["CHECK", "NOCHECK"]) {
            self.advance();
            Some(self.take_word_upper()? == "CHECK")
        } else {
            None
        };
        let action = if self.eat_word("ADD") {
            // ALTER TABLE also takes an unnamed `DEFAULT expr FOR column`.
            let element = |p: &mut Self| {
                if p.is_word("DEFAULT") {
                    Ok(TableElement::Constraint(p.parse_table_constraint()?))
                } else {
                    p.parse_table_element()
                }
            };
            let mut elements = vec![element(self)?];
            while self.eat(&TokenKind::Comma) {
                elements.push(element(self)?);
            }
            AlterTableAction::Add { with_check, elements }
        } else if self.is_any_word(&["CHECK", "NOCHECK"]) && self.is_word_at(1, "CONSTRAINT") {
            let enable = self.take_word_upper()? == "CHECK";
            self.advance();
            let names = if self.eat_word("ALL") { None } else { Some(self.parse_ident_list()?) };
            AlterTableAction::CheckConstraints { with_check, enable, names }
        } else if with_check.is_some() {
            return Err(self.error());
        } else if self.eat_word("DROP") {
            let mut items = Vec::new();
            let mut column = false;
            loop {
                if self.eat_word("COLUMN") {
                    column = true;
                } else if self.eat_word("CONSTRAINT") {
                    column = false;
                }
                let if_exists = self.parse_if_exists();
                items.push(DropTableItem { column, if_exists, name: self.parse_ident()? });
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
            AlterTableAction::Drop(items)
        } else if self.eat_word("ALTER") {
            self.expect_word("COLUMN")?;
            let name = self.parse_ident()?;
            if self.is_any_word(&["ADD", "DROP"]) {
                let add = self.take_word_upper()? == "ADD";
                let property = if self.is_word("NOT") {
                    self.advance();
                    self.expect_word("FOR")?;
                    self.expect_word("REPLICATION")?;
                    "NOT FOR REPLICATION".to_string()
                } else {
                    self.take_word_upper()?
                };
                AlterTableAction::AlterColumnProperty { name, add, property }
            } else {
                let data_type = self.parse_data_type()?;
                let collation = if self.eat_word("COLLATE") { Some(self.parse_ident()?) } else { None };
                let sparse = self.eat_word("SPARSE");
                let nullable = self.parse_nullability();
                AlterTableAction::AlterColumn { name, data_type, collation, nullable, sparse }
            }
        } else if self.is_any_word(&["ENABLE", "DISABLE"]) && self.is_word_at(1, "TRIGGER") {
            let enable = self.take_word_upper()? == "ENABLE";
            self.advance();
            let names = if self.eat_word("ALL") { None } else { Some(self.parse_ident_list()?) };
            AlterTableAction::Trigger { enable, names }
        } else if self.eat_word("SET") {
            AlterTableAction::Set(self.parse_paren_options()?)
        } else if self.eat_word("REBUILD") {
            let options = if self.eat_word("WITH") { self.parse_paren_options()? } else { Vec::new() };
            AlterTableAction::Rebuild(options)
        } else {
            return Err(self.error());
        };
        Ok(StatementKind::AlterTable(Box::new(AlterTable { name, action })))
    }

    fn parse_ident_list(&mut self) -> PResult<Vec<Ident>> {
        let mut names = vec![self.parse_ident()?];
        while self.eat(&TokenKind::Comma) {
            names.push(self.parse_ident()?);
        }
        Ok(names)
    }

    // -----------------------------------------------------------------------------------
    // Indexes
    // -----------------------------------------------------------------------------------

    fn parse_create_index(&mut self) -> PResult<StatementKind> {
        let unique = self.eat_word("UNIQUE");
        let clustered = self.parse_clustered();
        let columnstore = self.eat_word("COLUMNSTORE");
        self.expect_word("INDEX")?;
        let name = self.parse_ident()?;
        self.expect_word("ON")?;
        let table = self.parse_object_name()?;
        let columns = if self.is(&TokenKind::LParen) { self.parse_index_columns()? } else { Vec::new() };
        let include = if self.eat_word("INCLUDE") { self.parse_paren_ident_list()? } else { Vec::new() };
        let filter = if self.eat_word("WHERE") { Some(self.parse_expr()?) } else { None };
        let options = if self.is_word("WITH") && self.is_at(1, &TokenKind::LParen) {
            self.advance();
            self.parse_paren_options()?
        } else {
            Vec::new()
        };
        let on = if self.eat_word("ON") { Some(self.parse_filegroup_ref()?) } else { None };
        Ok(StatementKind::CreateIndex(Box::new(CreateIndex {
            unique,
            clustered,
            columnstore,
            name,
            table,
            columns,
            include,
            filter,
            options,
            on,
        })))
    }

    fn parse_alter_index(&mut self) -> PResult<StatementKind> {
        let name = if self.eat_word("ALL") { None } else { Some(self.parse_ident()?) };
        self.expect_word("ON")?;
        let table = self.parse_object_name()?;
        let with_options = |p: &mut Self| -> PResult<Vec<OptionItem>> {
            if p.is_word("WITH") && p.is_at(1, &TokenKind::LParen) {
                p.advance();
                p.parse_paren_options()
            } else {
                Ok(Vec::new())
            }
        };
        let action = if self.eat_word("REBUILD") {
            AlterIndexAction::Rebuild(with_options(self)?)
        } else if self.eat_word("REORGANIZE") {
            AlterIndexAction::Reorganize(with_options(self)?)
        } else if self.eat_word("DISABLE") {
            AlterIndexAction::Disable
        } else {
            self.expect_word("SET")?;
            AlterIndexAction::Set(self.parse_paren_options()?)
        };
        Ok(StatementKind::AlterIndex(Box::new(AlterIndex { name, table, action })))
    }

    // -----------------------------------------------------------------------------------
    // Logins and users
    // -----------------------------------------------------------------------------------

    fn parse_create_login(&mut self) -> PResult<StatementKind> {
        let name = self.parse_ident()?;
        let mut login = CreateLogin { name, windows: false, options: Vec::new() };
        if self.eat_word("FROM") {
            self.expect_word("WINDOWS")?;
            login.windows = true;
            if self.eat_word("WITH") {
                login.options = self.parse_login_options()?;
            }
        } else {
            self.expect_word("WITH")?;
            login.options = self.parse_login_options()?;
        }
        Ok(StatementKind::CreateLogin(Box::new(login)))
    }

    fn parse_alter_login(&mut self) -> PResult<StatementKind> {
        let name = self.parse_ident()?;
        let action = if self.eat_word("ENABLE") {
            AlterLoginAction::Enable
        } else if self.eat_word("DISABLE") {
            AlterLoginAction::Disable
        } else {
            self.expect_word("WITH")?;
            AlterLoginAction::With(self.parse_login_options()?)
        };
        Ok(StatementKind::AlterLogin(Box::new(AlterLogin { name, action })))
    }

    fn parse_login_options(&mut self) -> PResult<Vec<LoginOption>> {
        let mut options = Vec::new();
        loop {
            if self.is_word("PASSWORD") && self.is_at(1, &TokenKind::Eq) {
                self.advance();
                self.advance();
                let value = self.parse_simple_value()?;
                let (mut hashed, mut must_change, mut unlock, mut old_password) = (false, false, false, None);
                loop {
                    if self.eat_word("HASHED") {
                        hashed = true;
                    } else if self.eat_word("MUST_CHANGE") {
                        must_change = true;
                    } else if self.eat_word("UNLOCK") {
                        unlock = true;
                    } else if self.is_word("OLD_PASSWORD") && self.is_at(1, &TokenKind::Eq) {
                        self.advance();
                        self.advance();
                        old_password = Some(self.parse_simple_value()?);
                    } else {
                        break;
                    }
                }
                options.push(LoginOption::Password { value, hashed, must_change, unlock, old_password });
            } else {
                options.push(LoginOption::Other(self.parse_option_item(false)?));
            }
            if !self.eat(&TokenKind::Comma) {
                return Ok(options);
            }
        }
    }

    fn parse_create_user(&mut self) -> PResult<StatementKind> {
        let name = self.parse_ident()?;
        let mut user = CreateUser { name, login: None, without_login: false, options: Vec::new() };
        if self.is_any_word(&["FOR", "FROM"]) && self.is_word_at(1, "LOGIN") {
            self.advance();
            self.advance();
            user.login = Some(self.parse_ident()?);
        } else if self.is_word("WITHOUT") && self.is_word_at(1, "LOGIN") {
            self.advance();
            self.advance();
            user.without_login = true;
        }
        if self.eat_word("WITH") {
            user.options = self.parse_option_list(false)?;
        }
        Ok(StatementKind::CreateUser(Box::new(user)))
    }
}
