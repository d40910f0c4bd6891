//! DBCC, BACKUP, RESTORE, Extended Events sessions, GRANT/DENY/REVOKE, and the generic
//! option lists (`WITH NO_INFOMSGS`, `WITH (MAX_MEMORY = 4 MB, ...)`) many statements use.

use super::{Capture, PResult, Parser};
use crate::ast::*;
use crate::lexer::TokenKind;

/// Units that may follow a number in an option value.
const UNITS: &[&str] =
    &["KB", "MB", "GB", "TB", "SECONDS", "MINUTES", "HOURS", "DAYS", "MS", "MILLISECONDS", "PERCENT"];

impl<'a> Parser<'a> {
    // -----------------------------------------------------------------------------------
    // Generic options
    // -----------------------------------------------------------------------------------

    /// `opt [= value], ...` without parentheses. `bare_values` allows a value without `=`
    /// (`TRUSTWORTHY ON`); without it an option is a name or `name = value`.
    pub(crate) fn parse_option_list(&mut self, bare_values: bool) -> PResult<Vec<OptionItem>> {
        let mut items = vec![self.parse_option_item(bare_values)?];
        while self.eat(&TokenKind::Comma) {
            items.push(self.parse_option_item(bare_values)?);
        }
        Ok(items)
    }

    /// `( opt [= value], ... )`: inside parentheses values may follow without `=`.
    pub(crate) fn parse_paren_options(&mut self) -> PResult<Vec<OptionItem>> {
        self.expect(&TokenKind::LParen)?;
        let items = self.nest(|p| p.parse_option_list(true))?;
        self.expect(&TokenKind::RParen)?;
        Ok(items)
    }

    pub(crate) fn parse_option_item(&mut self, bare_values: bool) -> PResult<OptionItem> {
        let name = self.take_word_upper()?;
        self.parse_option_rest(name, bare_values)
    }

    /// The rest of an option whose name was consumed.
    pub(crate) fn parse_option_rest(&mut self, name: String, bare_values: bool) -> PResult<OptionItem> {
        if self.eat(&TokenKind::Eq) {
            let value = Some(self.parse_option_value()?);
            return Ok(OptionItem { name, equals: true, value });
        }
        if self.is(&TokenKind::LParen) || (bare_values && self.starts_bare_option_value()) {
            let value = Some(self.parse_option_value()?);
            return Ok(OptionItem { name, equals: false, value });
        }
        Ok(OptionItem { name, equals: false, value: None })
    }

    /// A value written without `=`: a non-reserved word, ON/OFF, a literal. Reserved words
    /// other than ON/OFF/DEFAULT end the option (they start the next clause or statement).
    fn starts_bare_option_value(&self) -> bool {
        match self.kind() {
            TokenKind::Word => !self.is_at(1, &TokenKind::Colon),
            TokenKind::Keyword => self.is_any_word(&["ON", "OFF", "DEFAULT"]),
            TokenKind::QuotedIdent { .. }
            | TokenKind::Integer
            | TokenKind::Decimal
            | TokenKind::Float
            | TokenKind::String { .. }
            | TokenKind::Binary(_)
            | TokenKind::Variable
            | TokenKind::Minus => true,
            _ => false,
        }
    }

    fn parse_option_value(&mut self) -> PResult<OptionValue> {
        if self.is(&TokenKind::LParen) {
            return Ok(OptionValue::List { word: None, items: self.parse_paren_options()? });
        }
        let name = match self.kind() {
            TokenKind::Keyword => {
                let ident = Ident::plain(self.text());
                self.advance();
                Some(ObjectName::from_ident(ident))
            }
            TokenKind::Word | TokenKind::QuotedIdent { .. } => Some(self.parse_object_name()?),
            _ => None,
        };
        if let Some(name) = name {
            if name.parts.len() == 1 && self.is(&TokenKind::LParen) {
                let word = name.parts.into_iter().next();
                return Ok(OptionValue::List { word, items: self.parse_paren_options()? });
            }
            return Ok(OptionValue::Name(name));
        }
        let value = self.parse_simple_value()?;
        if self.eat(&TokenKind::Percent) {
            return Ok(OptionValue::Quantity { value, unit: "%".to_string() });
        }
        if UNITS.iter().any(|u| self.is_word(u)) {
            let unit = self.take_word_upper()?;
            return Ok(OptionValue::Quantity { value, unit });
        }
        Ok(OptionValue::Expr(value))
    }

    // -----------------------------------------------------------------------------------
    // DBCC
    // -----------------------------------------------------------------------------------

    pub(crate) fn parse_dbcc(&mut self) -> PResult<StatementKind> {
        self.expect_word("DBCC")?;
        let command = self.take_word_upper()?;
        let args = if self.is(&TokenKind::LParen) { self.parse_call_args()? } else { Vec::new() };
        let options = if self.eat_word("WITH") { self.parse_option_list(false)? } else { Vec::new() };
        Ok(StatementKind::Dbcc(Box::new(Dbcc { command, args, options })))
    }

    // -----------------------------------------------------------------------------------
    // BACKUP and RESTORE
    // -----------------------------------------------------------------------------------

    fn parse_backup_devices(&mut self) -> PResult<Vec<BackupDevice>> {
        let mut devices = Vec::new();
        loop {
            let kind = if self.is_word("DISK") {
                Some(DeviceKind::Disk)
            } else if self.is_word("TAPE") {
                Some(DeviceKind::Tape)
            } else if self.is_word("URL") {
                Some(DeviceKind::Url)
            } else {
                None
            };
            let device = match kind {
                Some(kind) if self.is_at(1, &TokenKind::Eq) => {
                    self.advance();
                    self.advance();
                    BackupDevice::File { kind, path: self.parse_simple_value()? }
                }
                _ => BackupDevice::Logical(self.parse_name_ref()?),
            };
            devices.push(device);
            if !self.eat(&TokenKind::Comma) {
                return Ok(devices);
            }
        }
    }

    pub(crate) fn parse_backup(&mut self) -> PResult<StatementKind> {
        let start = self.pos;
        self.expect_word("BACKUP")?;
        let kind = if self.eat_word("DATABASE") {
            BackupKind::Database
        } else if self.eat_word("LOG") {
            BackupKind::Log
        } else {
            // BACKUP CERTIFICATE / MASTER KEY / SERVICE MASTER KEY
            let keyword = format!("BACKUP {}", self.take_word_upper()?);
            return self.capture_other(start, &keyword, Capture::Heuristic);
        };
        let database = self.parse_name_ref()?;
        self.expect_word("TO")?;
        let to = self.parse_backup_devices()?;
        let mut options = Vec::new();
        if self.eat_word("WITH") {
            for item in self.parse_option_list(false)? {
                options.push(backup_option(item));
            }
        }
        Ok(StatementKind::Backup(Box::new(Backup { kind, database, to, options })))
    }

    pub(crate) fn parse_restore(&mut self) -> PResult<StatementKind> {
        let start = self.pos;
        self.expect_word("RESTORE")?;
        let kind = match self.text().to_ascii_uppercase().as_str() {
            "DATABASE" => RestoreKind::Database,
            "LOG" => RestoreKind::Log,
            "VERIFYONLY" => RestoreKind::VerifyOnly,
            "HEADERONLY" => RestoreKind::HeaderOnly,
            "FILELISTONLY" => RestoreKind::FileListOnly,
            "LABELONLY" => RestoreKind::LabelOnly,
            _ => {
                let keyword = format!("RESTORE {}", self.take_word_upper()?);
                return self.capture_other(start, &keyword, Capture::Heuristic);
            }
        };
        self.advance();
        let database =
            if matches!(kind, RestoreKind::Database | RestoreKind::Log) { Some(self.parse_name_ref()?) } else { None };
        let from = if self.eat_word("FROM") {
            self.parse_backup_devices()?
        } else if database.is_none() {
            return Err(self.error());
        } else {
            Vec::new()
        };
        let mut options = Vec::new();
        if self.eat_word("WITH") {
            loop {
                if self.eat_word("MOVE") {
                    let logical = self.parse_simple_value()?;
                    self.expect_word("TO")?;
                    let physical = self.parse_simple_value()?;
                    options.push(RestoreOption::Move { logical, physical });
                } else {
                    options.push(restore_option(self.parse_option_item(false)?));
                }
                if !self.eat(&TokenKind::Comma) {
                    break;
                }
            }
        }
        Ok(StatementKind::Restore(Box::new(Restore { kind, database, from, options })))
    }

    // -----------------------------------------------------------------------------------
    // Extended Events sessions
    // -----------------------------------------------------------------------------------

    pub(crate) fn parse_event_session_scope(&mut self) -> PResult<EventSessionScope> {
        if self.eat_word("SERVER") {
            Ok(EventSessionScope::Server)
        } else {
            self.expect_word("DATABASE")?;
            Ok(EventSessionScope::Database)
        }
    }

    /// CREATE/ALTER EVENT SESSION (after CREATE or ALTER).
    pub(crate) fn parse_event_session(&mut self, alter: bool) -> PResult<StatementKind> {
        self.expect_word("EVENT")?;
        self.expect_word("SESSION")?;
        let name = self.parse_ident()?;
        self.expect_word("ON")?;
        let scope = self.parse_event_session_scope()?;
        let mut session = EventSession { alter, name, scope, clauses: Vec::new(), options: Vec::new(), state: None };
        if alter && self.is_word("STATE") {
            self.advance();
            self.expect(&TokenKind::Eq)?;
            session.state = Some(if self.eat_word("START") {
                true
            } else {
                self.expect_word("STOP")?;
                false
            });
            return Ok(StatementKind::EventSession(Box::new(session)));
        }
        loop {
            if !session.clauses.is_empty() {
                self.eat(&TokenKind::Comma);
            }
            // ADD/DROP EVENT/TARGET; anything else (WITH, `;`, the next statement) ends
            // the list.
            if !self.is_any_word_at(1, &["EVENT", "TARGET"]) {
                break;
            }
            let add = if self.is_word("ADD") {
                true
            } else if self.is_word("DROP") && alter {
                false
            } else {
                break;
            };
            self.advance();
            let clause = if self.eat_word("EVENT") {
                let name = self.parse_object_name()?;
                if add {
                    EventSessionClause::AddEvent(self.parse_xe_event_body(name)?)
                } else {
                    EventSessionClause::DropEvent(name)
                }
            } else {
                self.expect_word("TARGET")?;
                let name = self.parse_object_name()?;
                if add {
                    let mut set = Vec::new();
                    if self.is(&TokenKind::LParen) {
                        self.advance();
                        self.expect_word("SET")?;
                        set = self.parse_xe_set_list()?;
                        self.expect(&TokenKind::RParen)?;
                    }
                    EventSessionClause::AddTarget(XeTarget { name, set })
                } else {
                    EventSessionClause::DropTarget(name)
                }
            };
            session.clauses.push(clause);
        }
        if self.is_word("WITH") && self.is_at(1, &TokenKind::LParen) {
            self.advance();
            session.options = self.parse_paren_options()?;
        }
        if session.clauses.is_empty() && session.options.is_empty() {
            return Err(self.error());
        }
        Ok(StatementKind::EventSession(Box::new(session)))
    }

    /// `( SET a = 1, b = 'x'  ACTION (p.a, ...)  WHERE predicate )`, parts optional.
    fn parse_xe_event_body(&mut self, name: ObjectName) -> PResult<XeEvent> {
        let mut event = XeEvent { name, set: Vec::new(), actions: Vec::new(), predicate: None };
        if !self.eat(&TokenKind::LParen) {
            return Ok(event);
        }
        loop {
            if self.eat_word("SET") {
                event.set = self.parse_xe_set_list()?;
            } else if self.eat_word("ACTION") {
                self.expect(&TokenKind::LParen)?;
                event.actions.push(self.parse_object_name()?);
                while self.eat(&TokenKind::Comma) {
                    event.actions.push(self.parse_object_name()?);
                }
                self.expect(&TokenKind::RParen)?;
            } else if self.eat_word("WHERE") {
                event.predicate = Some(self.parse_expr()?);
            } else {
                break;
            }
        }
        self.expect(&TokenKind::RParen)?;
        Ok(event)
    }

    /// `name = value, ...` after SET in an event or target.
    fn parse_xe_set_list(&mut self) -> PResult<Vec<(Ident, Expr)>> {
        let mut set = Vec::new();
        loop {
            let name = self.parse_ident()?;
            self.expect(&TokenKind::Eq)?;
            set.push((name, self.parse_additive()?));
            if !self.eat(&TokenKind::Comma) {
                return Ok(set);
            }
        }
    }

    // -----------------------------------------------------------------------------------
    // GRANT / DENY / REVOKE
    // -----------------------------------------------------------------------------------

    pub(crate) fn parse_permission(&mut self) -> PResult<StatementKind> {
        let action = match self.take_word_upper()?.as_str() {
            "GRANT" => PermissionAction::Grant,
            "DENY" => PermissionAction::Deny,
            _ => PermissionAction::Revoke,
        };
        let grant_option_for = if action == PermissionAction::Revoke
            && self.is_word("GRANT")
            && self.is_word_at(1, "OPTION")
            && self.is_word_at(2, "FOR")
        {
            self.advance();
            self.advance();
            self.advance();
            true
        } else {
            false
        };
        let mut permissions = Vec::new();
        loop {
            let mut words = Vec::new();
            while self.is_bare_word() && !self.is_any_word(&["ON", "TO", "FROM"]) {
                words.push(self.take_word_upper()?);
            }
            if words.is_empty() {
                return Err(self.error());
            }
            permissions.push(words.join(" "));
            if !self.eat(&TokenKind::Comma) {
                break;
            }
        }
        let on = if self.eat_word("ON") {
            let class = if self.is_bare_word() && self.is_at(1, &TokenKind::DoubleColon) {
                let c = self.take_word_upper()?;
                self.advance();
                Some(c)
            } else {
                None
            };
            Some(Securable { class, name: self.parse_object_name()? })
        } else {
            None
        };
        if !self.eat_word("TO") {
            if action != PermissionAction::Revoke {
                return Err(self.error());
            }
            self.expect_word("FROM")?;
        }
        let mut principals = vec![self.parse_ident_or_keyword()?];
        while self.eat(&TokenKind::Comma) {
            principals.push(self.parse_ident_or_keyword()?);
        }
        let with_grant_option = if self.is_word("WITH") && self.is_word_at(1, "GRANT") {
            self.advance();
            self.advance();
            self.expect_word("OPTION")?;
            true
        } else {
            false
        };
        let cascade = self.eat_word("CASCADE");
        let as_principal = if self.eat_word("AS") { Some(self.parse_ident_or_keyword()?) } else { None };
        Ok(StatementKind::Permission(Box::new(Permission {
            action,
            grant_option_for,
            permissions,
            on,
            principals,
            with_grant_option,
            cascade,
            as_principal,
        })))
    }
}

/// The value of `name = expr` options, if the option has that shape.
fn expr_value(item: &OptionItem) -> Option<Expr> {
    match (&item.value, item.equals) {
        (Some(OptionValue::Expr(e)), true) => Some(e.clone()),
        _ => None,
    }
}

/// BACKUP options the AST names; anything else (or any of these in an unexpected shape)
/// stays an `Other` item with its name and value.
fn backup_option(item: OptionItem) -> BackupOption {
    let flag = item.value.is_none();
    let mapped = match item.name.as_str() {
        "CHECKSUM" if flag => Some(BackupOption::Checksum(true)),
        "NO_CHECKSUM" if flag => Some(BackupOption::Checksum(false)),
        "COMPRESSION" if flag => Some(BackupOption::Compression(true)),
        "NO_COMPRESSION" if flag => Some(BackupOption::Compression(false)),
        "COPY_ONLY" if flag => Some(BackupOption::CopyOnly),
        "INIT" if flag => Some(BackupOption::Init(true)),
        "NOINIT" if flag => Some(BackupOption::Init(false)),
        "FORMAT" if flag => Some(BackupOption::Format(true)),
        "NOFORMAT" if flag => Some(BackupOption::Format(false)),
        "DIFFERENTIAL" if flag => Some(BackupOption::Differential),
        "CONTINUE_AFTER_ERROR" if flag => Some(BackupOption::ContinueAfterError(true)),
        "STOP_ON_ERROR" if flag => Some(BackupOption::ContinueAfterError(false)),
        "STATS" if flag => Some(BackupOption::Stats(None)),
        "STATS" => expr_value(&item).map(|e| BackupOption::Stats(Some(e))),
        "BUFFERCOUNT" => expr_value(&item).map(BackupOption::BufferCount),
        "MAXTRANSFERSIZE" => expr_value(&item).map(BackupOption::MaxTransferSize),
        "BLOCKSIZE" => expr_value(&item).map(BackupOption::BlockSize),
        "NAME" => expr_value(&item).map(BackupOption::Name),
        "DESCRIPTION" => expr_value(&item).map(BackupOption::Description),
        _ => None,
    };
    mapped.unwrap_or(BackupOption::Other(item))
}

/// RESTORE options the AST names (MOVE is parsed separately).
fn restore_option(item: OptionItem) -> RestoreOption {
    let flag = item.value.is_none();
    let mapped = match item.name.as_str() {
        "REPLACE" if flag => Some(RestoreOption::Replace),
        "RECOVERY" if flag => Some(RestoreOption::Recovery),
        "NORECOVERY" if flag => Some(RestoreOption::NoRecovery),
        "CHECKSUM" if flag => Some(RestoreOption::Checksum(true)),
        "NO_CHECKSUM" if flag => Some(RestoreOption::Checksum(false)),
        "CONTINUE_AFTER_ERROR" if flag => Some(RestoreOption::ContinueAfterError(true)),
        "STOP_ON_ERROR" if flag => Some(RestoreOption::ContinueAfterError(false)),
        "STATS" if flag => Some(RestoreOption::Stats(None)),
        "STATS" => expr_value(&item).map(|e| RestoreOption::Stats(Some(e))),
        "STANDBY" => expr_value(&item).map(RestoreOption::Standby),
        "STOPAT" => expr_value(&item).map(RestoreOption::StopAt),
        "FILE" => expr_value(&item).map(RestoreOption::File),
        _ => None,
    };
    mapped.unwrap_or(RestoreOption::Other(item))
}
