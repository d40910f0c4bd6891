//! The session's parse cache: a batch text the session sends again (a stress tool's
//! batch, an application's fixed statements, a driver's connection SET batch) is lexed
//! and parsed once. SQL Server's plan cache plays this part for ad-hoc batches. Parsing
//! is a pure function of the text (no SET option changes how a batch lexes or parses),
//! so the text alone is the key; a text that fails to parse is not kept.

use std::collections::HashMap;
use std::sync::Arc;

use types::SqlError;

use crate::ast::Batch;

/// Batches kept per session; past this an arbitrary one makes room.
const MAX_ENTRIES: usize = 64;
/// Longer texts (scripts, procedure definitions) are parsed every time: they are
/// rarely repeated and would hold the most memory.
const MAX_TEXT: usize = 8 * 1024;

#[derive(Debug, Default)]
pub struct ParseCache {
    map: HashMap<Box<str>, Arc<Batch>>,
}

impl ParseCache {
    /// The parsed batch for `text`, from the cache or parsed now.
    pub fn parse(&mut self, text: &str) -> Result<Arc<Batch>, SqlError> {
        // A text too long to be kept is not looked up either (hashing it costs).
        if text.len() <= MAX_TEXT {
            if let Some(b) = self.map.get(text) {
                return Ok(b.clone());
            }
        }
        let batch = Arc::new(crate::parse_batch(text)?);
        if text.len() <= MAX_TEXT {
            if self.map.len() >= MAX_ENTRIES {
                if let Some(k) = self.map.keys().next().cloned() {
                    self.map.remove(&k);
                }
            }
            self.map.insert(text.into(), batch.clone());
        }
        Ok(batch)
    }

    pub fn len(&self) -> usize {
        self.map.len()
    }

    pub fn is_empty(&self) -> bool {
        self.map.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repeated_batch_is_parsed_once_and_errors_are_not_kept() {
        let mut c = ParseCache::default();
        let a = c.parse("SELECT 1; SELECT 2").unwrap();
        let b = c.parse("SELECT 1; SELECT 2").unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(a.statements.len(), 2);
        let e = c.parse("SELECT 1 +;").unwrap_err();
        assert_eq!(e.number, 102);
        assert!(c.parse("SELECT 1 +;").is_err());
        assert_eq!(c.len(), 1);
        for i in 0..(MAX_ENTRIES * 2) {
            c.parse(&format!("SELECT {i}")).unwrap();
        }
        assert_eq!(c.len(), MAX_ENTRIES);
        let long = format!("SELECT 1{}", " ".repeat(MAX_TEXT));
        let x = c.parse(&long).unwrap();
        let y = c.parse(&long).unwrap();
        assert!(!Arc::ptr_eq(&x, &y), "long texts are not kept");
    }
}
