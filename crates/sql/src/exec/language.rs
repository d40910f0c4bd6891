//! SET LANGUAGE: the session language (@@LANGUAGE, sys.dm_exec_sessions.language), with
//! the language's first day of the week (SET DATEFIRST) as sys.syslanguages gives it when
//! the language changes.
//! The client is told with an ENVCHANGE (type 2) and message 5703, as at login.
//!
//! Dates are read with the language's month names (and English ones) and DATENAME
//! writes them, for the languages `types::lang` has names of. Decision: a language's
//! date order (dmy for most) is not applied: numeric dates stay mdy
//! (docs/compatibility.md).

use types::SqlError;

use super::context::Cx;
use crate::results::{EnvChange, Message};

/// The language named `name` (its name or alias, any case): (name, datefirst).
fn find(name: &str) -> Option<(&'static str, u8)> {
    types::lang::find(name).map(|l| (l.name, l.datefirst))
}

/// SET LANGUAGE name: Msg 2740 for a language SQL Server does not have.
pub fn set_language(cx: &mut Cx, name: &str) -> Result<(), SqlError> {
    let Some((lang, datefirst)) = find(name) else {
        return Err(SqlError::new(
            2740,
            16,
            1,
            format!("SET LANGUAGE failed because '{name}' is not an official language name or a language alias on this SQL Server."),
        ));
    };
    let old = std::mem::replace(&mut cx.state.language, lang.to_string());
    // A new language brings its first day of the week (SQL Server's @@DATEFIRST example:
    // Italian 1, us_english 7). Re-setting the current language keeps a SET DATEFIRST
    // made since: tedious sends SET DATEFIRST before SET LANGUAGE us_english at every
    // login. (What SQL Server does then is not documented.)
    if old != lang {
        cx.state.datefirst = datefirst;
        cx.fcx.datefirst = datefirst;
    }
    cx.fcx.language = lang.to_string();
    types::lang::set_current(types::lang::by_name(lang));
    let _ = cx.sink.env_change(&EnvChange::Language { old, new: lang.to_string() });
    let m = SqlError::new(5703, 0, 1, format!("Changed language setting to {lang}."));
    let _ = cx.sink.message(&Message { error: m, info: true });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases() {
        assert_eq!(find("us_english"), Some(("us_english", 7)));
        assert_eq!(find("english"), Some(("us_english", 7)));
        assert_eq!(find("Russian"), Some(("русский", 1)));
        assert_eq!(find("РУССКИЙ"), Some(("русский", 1)));
        assert_eq!(find("British English"), Some(("British", 1)));
        assert_eq!(find("Klingon"), None);
    }
}
