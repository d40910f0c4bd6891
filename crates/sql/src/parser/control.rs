//! DECLARE, SET, control flow (BEGIN/END, IF, WHILE, TRY/CATCH, RETURN, THROW,
//! RAISERROR, WAITFOR), EXEC, transactions and cursors.

use super::{PResult, Parser};
use crate::ast::*;
use crate::lexer::TokenKind;

/// SET options that take a value rather than ON/OFF.
const VALUE_SET_OPTIONS: &[&str] = &[
    "DATEFORMAT",
    "DATEFIRST",
    "LANGUAGE",
    "LOCK_TIMEOUT",
    "DEADLOCK_PRIORITY",
    "TEXTSIZE",
    "ROWCOUNT",
    "CONTEXT_INFO",
    "QUERY_GOVERNOR_COST_LIMIT",
];

impl<'a> Parser<'a> {
    pub(crate) fn parse_declare(&mut self) -> PResult<StatementKind> {
        self.expect_word("DECLARE")?;
        if !self.is(&TokenKind::Variable) {
            // DECLARE name [INSENSITIVE] [SCROLL] CURSOR ...
            let name = self.parse_ident()?;
            let definition = self.parse_cursor_definition()?;
            return Ok(StatementKind::Declare(vec![Declaration::Cursor { name, definition: Box::new(definition) }]));
        }
        let mut decls = Vec::new();
        loop {
            let name = self.take_variable()?;
            self.eat_word("AS");
            if self.eat_word("TABLE") {
                let elements = self.parse_table_elements()?;
                decls.push(Declaration::Table { name, elements });
            } else {
                let data_type = if self.is_word("CURSOR") {
                    self.advance();
                    DataType { name: ObjectName::from_ident(Ident::plain("CURSOR")), args: Vec::new() }
                } else {
                    self.parse_data_type()?
                };
                let value = if self.eat(&TokenKind::Eq) { Some(self.parse_additive()?) } else { None };
                decls.push(Declaration::Variable { name, data_type, value });
            }
            if !self.eat(&TokenKind::Comma) {
                return Ok(StatementKind::Declare(decls));
            }
        }
    }

    fn parse_cursor_definition(&mut self) -> PResult<CursorDefinition> {
        let mut iso_options = Vec::new();
        while self.is_any_word(&["INSENSITIVE", "SCROLL"]) {
            iso_options.push(self.take_word_upper()?);
        }
        self.expect_word("CURSOR")?;
        let mut options = Vec::new();
        let options_at = self.pos;
        while self.is_bare_word() && !self.is_word("FOR") {
            options.push(self.take_word_upper()?);
        }
        if !iso_options.is_empty() && !options.is_empty() {
            let mut e = self.error_at(options_at);
            e.number = 1049;
            e.message = "Mixing old and new syntax to specify cursor options is not allowed.".into();
            return Err(e);
        }
        self.expect_word("FOR")?;
        let query = self.parse_query()?;
        let mut for_update = None;
        let mut read_only = false;
        if self.is_word("FOR") && self.is_word_at(1, "UPDATE") {
            self.advance();
            self.advance();
            let mut cols = Vec::new();
            if self.eat_word("OF") {
                cols.push(self.parse_ident()?);
                while self.eat(&TokenKind::Comma) {
                    cols.push(self.parse_ident()?);
                }
            }
            for_update = Some(cols);
        } else if self.is_word("FOR") && self.is_word_at(1, "READ") && self.is_word_at(2, "ONLY") {
            self.advance();
            self.advance();
            self.advance();
            read_only = true;
        }
        Ok(CursorDefinition { iso_options, options, query: Box::new(query), for_update, read_only })
    }

    pub(crate) fn parse_cursor_ref(&mut self) -> PResult<CursorRef> {
        let global = if self.is_word("GLOBAL") && (self.is_ident_at(1) || self.is_at(1, &TokenKind::Variable)) {
            self.advance();
            true
        } else {
            false
        };
        Ok(CursorRef { global, name: self.parse_name_ref()? })
    }

    pub(crate) fn parse_fetch(&mut self) -> PResult<StatementKind> {
        self.expect_word("FETCH")?;
        let direction = if self.eat_word("NEXT") {
            Some(FetchDirection::Next)
        } else if self.eat_word("PRIOR") {
            Some(FetchDirection::Prior)
        } else if self.eat_word("FIRST") {
            Some(FetchDirection::First)
        } else if self.eat_word("LAST") {
            Some(FetchDirection::Last)
        } else if self.eat_word("ABSOLUTE") {
            Some(FetchDirection::Absolute(self.parse_simple_value()?))
        } else if self.eat_word("RELATIVE") {
            Some(FetchDirection::Relative(self.parse_simple_value()?))
        } else {
            None
        };
        self.eat_word("FROM");
        let cursor = self.parse_cursor_ref()?;
        let mut into = Vec::new();
        if self.eat_word("INTO") {
            into.push(self.take_variable()?);
            while self.eat(&TokenKind::Comma) {
                into.push(self.take_variable()?);
            }
        }
        Ok(StatementKind::Fetch(Box::new(Fetch { direction, cursor, into })))
    }

    pub(crate) fn parse_set(&mut self) -> PResult<StatementKind> {
        self.expect_word("SET")?;
        if self.is(&TokenKind::Variable) {
            let name = self.take_variable()?;
            let op = self.parse_assign_op()?;
            if op == AssignOp::Assign && self.is_word("CURSOR") {
                let definition = Box::new(self.parse_cursor_definition()?);
                return Ok(StatementKind::SetCursor { name, definition });
            }
            let value = self.parse_additive()?;
            return Ok(StatementKind::SetVariable { name, op, value });
        }
        if self.is_word("TRANSACTION") {
            self.advance();
            self.expect_word("ISOLATION")?;
            self.expect_word("LEVEL")?;
            let level = if self.eat_word("READ") {
                if self.eat_word("UNCOMMITTED") {
                    IsolationLevel::ReadUncommitted
                } else {
                    self.expect_word("COMMITTED")?;
                    IsolationLevel::ReadCommitted
                }
            } else if self.eat_word("REPEATABLE") {
                self.expect_word("READ")?;
                IsolationLevel::RepeatableRead
            } else if self.eat_word("SNAPSHOT") {
                IsolationLevel::Snapshot
            } else {
                self.expect_word("SERIALIZABLE")?;
                IsolationLevel::Serializable
            };
            return Ok(StatementKind::SetOption(SetOption::IsolationLevel(level)));
        }
        if self.is_word("IDENTITY_INSERT") {
            self.advance();
            let table = self.parse_object_name()?;
            let on = self.parse_on_off()?;
            return Ok(StatementKind::SetOption(SetOption::IdentityInsert { table, on }));
        }
        let first = self.take_word_upper()?;
        if VALUE_SET_OPTIONS.contains(&first.as_str()) {
            let value = if self.is_ident() {
                SetValue::Word(self.parse_ident()?)
            } else {
                SetValue::Expr(self.parse_simple_value()?)
            };
            return Ok(StatementKind::SetOption(SetOption::Value { name: first, value }));
        }
        let mut names = vec![self.set_flag_name(first)?];
        while self.eat(&TokenKind::Comma) {
            let w = self.take_word_upper()?;
            // `SET STATISTICS IO, TIME ON` lists a second STATISTICS option.
            let continues_statistics = names.last().is_some_and(|n| n.starts_with("STATISTICS "))
                && ["IO", "TIME", "PROFILE", "XML"].contains(&w.as_str());
            names.push(if continues_statistics { format!("STATISTICS {w}") } else { self.set_flag_name(w)? });
        }
        let on = self.parse_on_off()?;
        Ok(StatementKind::SetOption(SetOption::Flags { names, on }))
    }

    /// STATISTICS IO/TIME/PROFILE/XML are two-word option names.
    fn set_flag_name(&mut self, first: String) -> PResult<String> {
        if first == "STATISTICS" {
            let second = self.take_word_upper()?;
            return Ok(format!("STATISTICS {second}"));
        }
        Ok(first)
    }

    pub(crate) fn parse_on_off(&mut self) -> PResult<bool> {
        if self.eat_word("ON") {
            Ok(true)
        } else if self.eat_word("OFF") {
            Ok(false)
        } else {
            Err(self.error())
        }
    }

    pub(crate) fn parse_if(&mut self) -> PResult<StatementKind> {
        self.expect_word("IF")?;
        let condition = self.parse_expr()?;
        let then_branch = Box::new(self.parse_nested_statement()?);
        if self.is(&TokenKind::Semicolon) && self.is_word_at(1, "ELSE") {
            self.advance();
        }
        let else_branch = if self.eat_word("ELSE") { Some(Box::new(self.parse_nested_statement()?)) } else { None };
        Ok(StatementKind::If { condition, then_branch, else_branch })
    }

    pub(crate) fn parse_while(&mut self) -> PResult<StatementKind> {
        self.expect_word("WHILE")?;
        let condition = self.parse_expr()?;
        let body = Box::new(self.parse_nested_statement()?);
        Ok(StatementKind::While { condition, body })
    }

    /// BEGIN ... END, BEGIN TRY/CATCH, BEGIN TRAN, BEGIN DISTRIBUTED TRAN.
    pub(crate) fn parse_begin(&mut self) -> PResult<StatementKind> {
        self.expect_word("BEGIN")?;
        if self.eat_word("TRY") {
            let try_block = self.parse_block_until_end()?;
            self.expect_word("END")?;
            self.expect_word("TRY")?;
            self.expect_word("BEGIN")?;
            self.expect_word("CATCH")?;
            let catch_block = self.parse_block_until_end()?;
            self.expect_word("END")?;
            self.expect_word("CATCH")?;
            return Ok(StatementKind::TryCatch { try_block, catch_block });
        }
        let distributed = self.eat_word("DISTRIBUTED");
        if self.is_any_word(&["TRAN", "TRANSACTION"]) {
            self.advance();
            let name = self.parse_optional_tran_name()?;
            let mut mark = None;
            if name.is_some() && self.is_word("WITH") && self.is_word_at(1, "MARK") {
                self.advance();
                self.advance();
                let description = if matches!(self.kind(), TokenKind::String { .. } | TokenKind::Variable) {
                    Some(self.parse_simple_value()?)
                } else {
                    None
                };
                mark = Some(description);
            }
            return Ok(StatementKind::BeginTransaction { name, distributed, mark });
        }
        if distributed {
            return Err(self.error());
        }
        let body = self.parse_block_until_end()?;
        if body.is_empty() {
            // SQL Server rejects an empty BEGIN END.
            return Err(self.error());
        }
        self.expect_word("END")?;
        Ok(StatementKind::Block(body))
    }

    fn parse_optional_tran_name(&mut self) -> PResult<Option<NameRef>> {
        if self.is(&TokenKind::Variable) || self.is_ident() {
            return Ok(Some(self.parse_name_ref()?));
        }
        Ok(None)
    }

    pub(crate) fn parse_commit(&mut self) -> PResult<StatementKind> {
        self.expect_word("COMMIT")?;
        let mut name = None;
        if self.is_any_word(&["TRAN", "TRANSACTION"]) {
            self.advance();
            name = self.parse_optional_tran_name()?;
        } else {
            self.eat_word("WORK");
        }
        let mut delayed_durability = None;
        if self.is_word("WITH") && self.is_at(1, &TokenKind::LParen) {
            self.advance();
            self.advance();
            self.expect_word("DELAYED_DURABILITY")?;
            self.expect(&TokenKind::Eq)?;
            delayed_durability = Some(self.parse_on_off()?);
            self.expect(&TokenKind::RParen)?;
        }
        Ok(StatementKind::Commit { name, delayed_durability })
    }

    pub(crate) fn parse_rollback(&mut self) -> PResult<StatementKind> {
        self.expect_word("ROLLBACK")?;
        let mut name = None;
        if self.is_any_word(&["TRAN", "TRANSACTION"]) {
            self.advance();
            name = self.parse_optional_tran_name()?;
        } else {
            self.eat_word("WORK");
        }
        Ok(StatementKind::Rollback { name })
    }

    pub(crate) fn parse_save(&mut self) -> PResult<StatementKind> {
        self.expect_word("SAVE")?;
        if !self.eat_word("TRAN") {
            self.expect_word("TRANSACTION")?;
        }
        Ok(StatementKind::SaveTransaction { name: self.parse_name_ref()? })
    }

    pub(crate) fn parse_return(&mut self) -> PResult<StatementKind> {
        self.expect_word("RETURN")?;
        let value = if self.starts_value() { Some(self.parse_expr()?) } else { None };
        Ok(StatementKind::Return(value))
    }

    pub(crate) fn parse_throw(&mut self) -> PResult<StatementKind> {
        self.expect_word("THROW")?;
        if !self.starts_value() {
            return Ok(StatementKind::Throw(None));
        }
        let number = self.parse_expr()?;
        self.expect(&TokenKind::Comma)?;
        let message = self.parse_expr()?;
        self.expect(&TokenKind::Comma)?;
        let state = self.parse_expr()?;
        Ok(StatementKind::Throw(Some(Box::new(ThrowArgs { number, message, state }))))
    }

    pub(crate) fn parse_raiserror(&mut self) -> PResult<StatementKind> {
        self.expect_word("RAISERROR")?;
        self.expect(&TokenKind::LParen)?;
        let message = self.parse_expr()?;
        self.expect(&TokenKind::Comma)?;
        let severity = self.parse_expr()?;
        self.expect(&TokenKind::Comma)?;
        let state = self.parse_expr()?;
        let mut args = Vec::new();
        while self.eat(&TokenKind::Comma) {
            args.push(self.parse_expr()?);
        }
        self.expect(&TokenKind::RParen)?;
        let mut options = Vec::new();
        if self.eat_word("WITH") {
            loop {
                let opt = match self.take_word_upper()?.as_str() {
                    "LOG" => RaiserrorOption::Log,
                    "NOWAIT" => RaiserrorOption::NoWait,
                    "SETERROR" => RaiserrorOption::SetError,
                    _ => return Err(self.error_at(self.pos - 1)),
                };
                options.push(opt);
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
        }
        Ok(StatementKind::Raiserror(Box::new(Raiserror { message, severity, state, args, options })))
    }

    pub(crate) fn parse_waitfor(&mut self) -> PResult<StatementKind> {
        self.expect_word("WAITFOR")?;
        let kind = if self.eat_word("DELAY") {
            WaitForKind::Delay
        } else {
            self.expect_word("TIME")?;
            WaitForKind::Time
        };
        let value = self.parse_simple_value()?;
        Ok(StatementKind::WaitFor { kind, value })
    }

    /// EXEC/EXECUTE: a procedure call, EXEC (string), or EXECUTE AS.
    pub(crate) fn parse_exec(&mut self) -> PResult<StatementKind> {
        if !self.eat_word("EXEC") {
            self.expect_word("EXECUTE")?;
        }
        if self.is(&TokenKind::LParen) {
            self.advance();
            let sql = self.parse_expr()?;
            self.expect(&TokenKind::RParen)?;
            let context = if self.is_word("AS") { Some(self.parse_execute_as_clause()?) } else { None };
            let at_server = if self.eat_word("AT") { Some(self.parse_ident()?) } else { None };
            return Ok(StatementKind::ExecString(Box::new(ExecString { sql, context, at_server })));
        }
        if self.is_word("AS") {
            return Ok(StatementKind::ExecuteAs(self.parse_execute_as_clause()?));
        }
        self.parse_exec_body()
    }

    /// AS CALLER | AS LOGIN = 'x' | AS USER = 'x'
    fn parse_execute_as_clause(&mut self) -> PResult<ExecuteAs> {
        self.expect_word("AS")?;
        if self.eat_word("CALLER") {
            return Ok(ExecuteAs::Caller);
        }
        let login = if self.eat_word("LOGIN") {
            true
        } else {
            self.expect_word("USER")?;
            false
        };
        self.expect(&TokenKind::Eq)?;
        let name = self.parse_simple_value()?;
        Ok(if login { ExecuteAs::Login(name) } else { ExecuteAs::User(name) })
    }

    /// `[@rc =] procedure [args] [WITH RECOMPILE]` (after EXEC, or a batch's first
    /// statement).
    pub(crate) fn parse_exec_body(&mut self) -> PResult<StatementKind> {
        let mut return_status = None;
        if self.is(&TokenKind::Variable) && self.is_at(1, &TokenKind::Eq) {
            return_status = Some(self.take_variable()?);
            self.advance();
        }
        let procedure = if self.is(&TokenKind::Variable) {
            ProcedureRef::Variable(self.take_variable()?)
        } else {
            ProcedureRef::Name(self.parse_object_name()?)
        };
        let mut args = Vec::new();
        if self.starts_exec_arg() {
            loop {
                args.push(self.parse_exec_arg()?);
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
        }
        let recompile = if self.is_word("WITH") && self.is_word_at(1, "RECOMPILE") {
            self.advance();
            self.advance();
            true
        } else {
            false
        };
        Ok(StatementKind::Exec(Box::new(ExecProcedure { return_status, procedure, args, recompile })))
    }

    fn starts_exec_arg(&self) -> bool {
        match self.kind() {
            k if k.is_constant() => true,
            TokenKind::Variable
            | TokenKind::SystemVariable
            | TokenKind::Minus
            | TokenKind::Plus
            | TokenKind::QuotedIdent { .. } => true,
            TokenKind::Word => !self.is_at(1, &TokenKind::Colon),
            TokenKind::Keyword => self.is_word("DEFAULT") || self.is_word("NULL"),
            _ => false,
        }
    }

    fn parse_exec_arg(&mut self) -> PResult<ExecArg> {
        let mut name = None;
        if self.is(&TokenKind::Variable) && self.is_at(1, &TokenKind::Eq) {
            name = Some(self.take_variable()?);
            self.advance();
        }
        let value = match self.kind() {
            TokenKind::Keyword if self.is_word("DEFAULT") => {
                let span = self.peek().span;
                self.advance();
                Expr { kind: ExprKind::Default, span }
            }
            TokenKind::Word | TokenKind::QuotedIdent { .. } => {
                // A bare word is passed as a string (`EXEC sp_helpdb master`).
                let span = self.peek().span;
                let ident = self.parse_ident()?;
                Expr { kind: ExprKind::Column(ObjectName::from_ident(ident)), span }
            }
            _ => self.parse_simple_value()?,
        };
        let output = self.eat_word("OUTPUT") || self.eat_word("OUT");
        Ok(ExecArg { name, value, output })
    }
}
