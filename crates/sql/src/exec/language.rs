//! SET LANGUAGE: the session language (@@LANGUAGE, sys.dm_exec_sessions.language), with
//! the language's first day of the week (SET DATEFIRST) as sys.syslanguages gives it when
//! the language changes.
//! The client is told with an ENVCHANGE (type 2) and message 5703, as at login.
//!
//! Decision: dates are still read and written in us_english (month names, mdy order):
//! Mesquite has no per-language date formats yet, so a language's date order and month
//! names are not applied (docs/compatibility.md).

use types::SqlError;

use super::Cx;
use crate::results::{EnvChange, Message};

/// A language of sys.syslanguages: (name, alias, datefirst).
const LANGUAGES: &[(&str, &str, u8)] = &[
    ("us_english", "English", 7),
    ("Deutsch", "German", 1),
    ("Français", "French", 1),
    ("日本語", "Japanese", 7),
    ("Dansk", "Danish", 1),
    ("Español", "Spanish", 1),
    ("Italiano", "Italian", 1),
    ("Nederlands", "Dutch", 1),
    ("Norsk", "Norwegian", 1),
    ("Português", "Portuguese", 7),
    ("Suomi", "Finnish", 1),
    ("Svenska", "Swedish", 1),
    ("čeština", "Czech", 1),
    ("magyar", "Hungarian", 1),
    ("polski", "Polish", 1),
    ("română", "Romanian", 1),
    ("hrvatski", "Croatian", 1),
    ("slovenčina", "Slovak", 1),
    ("slovenski", "Slovenian", 1),
    ("ελληνικά", "Greek", 1),
    ("български", "Bulgarian", 1),
    ("русский", "Russian", 1),
    ("Türkçe", "Turkish", 1),
    ("British", "British English", 1),
    ("eesti", "Estonian", 1),
    ("latviešu", "Latvian", 1),
    ("lietuvių", "Lithuanian", 1),
    ("Português (Brasil)", "Brazilian", 7),
    ("繁體中文", "Traditional Chinese", 7),
    ("한국어", "Korean", 7),
    ("简体中文", "Simplified Chinese", 7),
    ("Arabic", "Arabic", 6),
    ("ไทย", "Thai", 7),
    ("norsk (bokmål)", "Norwegian (Bokmål)", 1),
];

/// The language named `name` (its name or alias, any case).
fn find(name: &str) -> Option<(&'static str, u8)> {
    let lower = name.trim().to_lowercase();
    LANGUAGES
        .iter()
        .find(|(n, alias, _)| n.to_lowercase() == lower || alias.to_lowercase() == lower)
        .map(|&(n, _, first)| (n, first))
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
