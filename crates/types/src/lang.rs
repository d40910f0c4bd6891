//! The languages of sys.syslanguages (SET LANGUAGE): name, alias, first day of the week
//! and, for the languages that have them here, the month and day names that dates are
//! read with (CAST('июл 19 2021' AS datetime) under Russian) and DATENAME writes.
//!
//! The session's language is also kept per thread ([`set_current`]): the executor sets it
//! when a request starts and on SET LANGUAGE, and text-to-date conversion, which has no
//! session context, reads it. Month names are read in the current language and, as a
//! fallback, in English.
//!
//! Decision: the names of 10 languages are here (us_english, British, Deutsch, Français,
//! Español, Italiano, Nederlands, Português, Brazilian, русский); the others read and
//! write English names, as all did before.

use std::cell::Cell;

/// Month and day names as sys.syslanguages has them (months, shortmonths, days; days
/// from Monday).
#[derive(Debug)]
pub struct Names {
    pub months: [&'static str; 12],
    pub short_months: [&'static str; 12],
    pub days: [&'static str; 7],
}

/// A language of sys.syslanguages.
#[derive(Debug)]
pub struct Language {
    pub name: &'static str,
    pub alias: &'static str,
    pub datefirst: u8,
    pub names: &'static Names,
}

const ENGLISH: Names = Names {
    months: [
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ],
    short_months: ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"],
    days: ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"],
};

const GERMAN: Names = Names {
    months: [
        "Januar",
        "Februar",
        "März",
        "April",
        "Mai",
        "Juni",
        "Juli",
        "August",
        "September",
        "Oktober",
        "November",
        "Dezember",
    ],
    short_months: ["Jan", "Feb", "Mär", "Apr", "Mai", "Jun", "Jul", "Aug", "Sep", "Okt", "Nov", "Dez"],
    days: ["Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"],
};

const FRENCH: Names = Names {
    months: [
        "janvier",
        "février",
        "mars",
        "avril",
        "mai",
        "juin",
        "juillet",
        "août",
        "septembre",
        "octobre",
        "novembre",
        "décembre",
    ],
    short_months: ["janv", "févr", "mars", "avr", "mai", "juin", "juil", "août", "sept", "oct", "nov", "déc"],
    days: ["lundi", "mardi", "mercredi", "jeudi", "vendredi", "samedi", "dimanche"],
};

const SPANISH: Names = Names {
    months: [
        "Enero",
        "Febrero",
        "Marzo",
        "Abril",
        "Mayo",
        "Junio",
        "Julio",
        "Agosto",
        "Septiembre",
        "Octubre",
        "Noviembre",
        "Diciembre",
    ],
    short_months: ["Ene", "Feb", "Mar", "Abr", "May", "Jun", "Jul", "Ago", "Sep", "Oct", "Nov", "Dic"],
    days: ["Lunes", "Martes", "Miércoles", "Jueves", "Viernes", "Sábado", "Domingo"],
};

const ITALIAN: Names = Names {
    months: [
        "gennaio",
        "febbraio",
        "marzo",
        "aprile",
        "maggio",
        "giugno",
        "luglio",
        "agosto",
        "settembre",
        "ottobre",
        "novembre",
        "dicembre",
    ],
    short_months: ["gen", "feb", "mar", "apr", "mag", "giu", "lug", "ago", "set", "ott", "nov", "dic"],
    days: ["lunedì", "martedì", "mercoledì", "giovedì", "venerdì", "sabato", "domenica"],
};

const DUTCH: Names = Names {
    months: [
        "januari",
        "februari",
        "maart",
        "april",
        "mei",
        "juni",
        "juli",
        "augustus",
        "september",
        "oktober",
        "november",
        "december",
    ],
    short_months: ["jan", "feb", "mrt", "apr", "mei", "jun", "jul", "aug", "sep", "okt", "nov", "dec"],
    days: ["maandag", "dinsdag", "woensdag", "donderdag", "vrijdag", "zaterdag", "zondag"],
};

const PORTUGUESE: Names = Names {
    months: [
        "janeiro",
        "fevereiro",
        "março",
        "abril",
        "maio",
        "junho",
        "julho",
        "agosto",
        "setembro",
        "outubro",
        "novembro",
        "dezembro",
    ],
    short_months: ["jan", "fev", "mar", "abr", "mai", "jun", "jul", "ago", "set", "out", "nov", "dez"],
    days: ["segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira", "sábado", "domingo"],
};

const RUSSIAN: Names = Names {
    months: [
        "Январь",
        "Февраль",
        "Март",
        "Апрель",
        "Май",
        "Июнь",
        "Июль",
        "Август",
        "Сентябрь",
        "Октябрь",
        "Ноябрь",
        "Декабрь",
    ],
    short_months: ["янв", "фев", "мар", "апр", "май", "июн", "июл", "авг", "сен", "окт", "ноя", "дек"],
    days: ["понедельник", "вторник", "среда", "четверг", "пятница", "суббота", "воскресенье"],
};

const fn lang(name: &'static str, alias: &'static str, datefirst: u8, names: &'static Names) -> Language {
    Language { name, alias, datefirst, names }
}

/// sys.syslanguages, in langid order.
pub static LANGUAGES: [Language; 34] = [
    lang("us_english", "English", 7, &ENGLISH),
    lang("Deutsch", "German", 1, &GERMAN),
    lang("Français", "French", 1, &FRENCH),
    lang("日本語", "Japanese", 7, &ENGLISH),
    lang("Dansk", "Danish", 1, &ENGLISH),
    lang("Español", "Spanish", 1, &SPANISH),
    lang("Italiano", "Italian", 1, &ITALIAN),
    lang("Nederlands", "Dutch", 1, &DUTCH),
    lang("Norsk", "Norwegian", 1, &ENGLISH),
    lang("Português", "Portuguese", 7, &PORTUGUESE),
    lang("Suomi", "Finnish", 1, &ENGLISH),
    lang("Svenska", "Swedish", 1, &ENGLISH),
    lang("čeština", "Czech", 1, &ENGLISH),
    lang("magyar", "Hungarian", 1, &ENGLISH),
    lang("polski", "Polish", 1, &ENGLISH),
    lang("română", "Romanian", 1, &ENGLISH),
    lang("hrvatski", "Croatian", 1, &ENGLISH),
    lang("slovenčina", "Slovak", 1, &ENGLISH),
    lang("slovenski", "Slovenian", 1, &ENGLISH),
    lang("ελληνικά", "Greek", 1, &ENGLISH),
    lang("български", "Bulgarian", 1, &ENGLISH),
    lang("русский", "Russian", 1, &RUSSIAN),
    lang("Türkçe", "Turkish", 1, &ENGLISH),
    lang("British", "British English", 1, &ENGLISH),
    lang("eesti", "Estonian", 1, &ENGLISH),
    lang("latviešu", "Latvian", 1, &ENGLISH),
    lang("lietuvių", "Lithuanian", 1, &ENGLISH),
    lang("Português (Brasil)", "Brazilian", 7, &PORTUGUESE),
    lang("繁體中文", "Traditional Chinese", 7, &ENGLISH),
    lang("한국어", "Korean", 7, &ENGLISH),
    lang("简体中文", "Simplified Chinese", 7, &ENGLISH),
    lang("Arabic", "Arabic", 6, &ENGLISH),
    lang("ไทย", "Thai", 7, &ENGLISH),
    lang("norsk (bokmål)", "Norwegian (Bokmål)", 1, &ENGLISH),
];

/// us_english, every session's language until SET LANGUAGE.
pub fn us_english() -> &'static Language {
    &LANGUAGES[0]
}

/// The language named `name` (its name or alias, any case).
pub fn find(name: &str) -> Option<&'static Language> {
    let lower = name.trim().to_lowercase();
    LANGUAGES.iter().find(|l| l.name.to_lowercase() == lower || l.alias.to_lowercase() == lower)
}

/// The language of a name as SET LANGUAGE stored it (us_english when unknown).
pub fn by_name(name: &str) -> &'static Language {
    LANGUAGES.iter().find(|l| l.name == name).unwrap_or(us_english())
}

thread_local! {
    static CURRENT: Cell<&'static Language> = Cell::new(us_english());
}

/// Makes `l` the language this thread's conversions read dates in.
pub fn set_current(l: &'static Language) {
    CURRENT.with(|c| c.set(l));
}

pub fn current() -> &'static Language {
    CURRENT.with(|c| c.get())
}

impl Language {
    /// The month (1-12) a written word names: a full or short month name of this
    /// language, then of English (where any three-letter prefix of a name counts), any
    /// case.
    pub fn month_number(&self, word: &str) -> Option<u32> {
        if !std::ptr::eq(self.names, &ENGLISH) {
            // Compared without allocating: dates are converted row by row.
            let same = |m: &&str| m.chars().flat_map(char::to_lowercase).eq(word.chars().flat_map(char::to_lowercase));
            let found =
                self.names.months.iter().position(same).or_else(|| self.names.short_months.iter().position(same));
            if let Some(i) = found {
                return Some(i as u32 + 1);
            }
        }
        if word.len() < 3 || !word.is_ascii() {
            return None;
        }
        let three = word.len() == 3;
        ENGLISH
            .months
            .iter()
            .position(|m| m.eq_ignore_ascii_case(word) || (three && m[..3].eq_ignore_ascii_case(word)))
            .map(|i| i as u32 + 1)
    }

    /// The full name of month `m` (1-12).
    pub fn month_name(&self, m: u32) -> &'static str {
        self.names.months[(m.clamp(1, 12) - 1) as usize]
    }

    /// The name of ISO weekday `d` (1 = Monday .. 7 = Sunday).
    pub fn day_name(&self, d: u32) -> &'static str {
        self.names.days[(d.clamp(1, 7) - 1) as usize]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn months_in_the_language_then_english() {
        let ru = find("Russian").unwrap();
        assert_eq!(ru.name, "русский");
        assert_eq!(ru.month_number("июл"), Some(7));
        assert_eq!(ru.month_number("ИЮЛЬ"), Some(7));
        assert_eq!(ru.month_number("Jul"), Some(7));
        assert_eq!(ru.month_number("ию"), None);
        let de = find("deutsch").unwrap();
        assert_eq!(de.month_number("märz"), Some(3));
        assert_eq!(de.month_number("Okt"), Some(10));
        assert_eq!(us_english().month_number("sept"), None);
        assert_eq!(us_english().month_number("September"), Some(9));
        assert_eq!(us_english().month_number("okt"), None);
        assert_eq!(find("Klingon").map(|l| l.name), None);
        assert_eq!(by_name("Français").day_name(7), "dimanche");
    }
}
