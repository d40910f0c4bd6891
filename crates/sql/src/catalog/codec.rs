//! The byte encoding of catalog rows (objects and schemas). Placeholder signatures: the
//! encoding is being written (see docs/roadmap.md).

use types::SqlError;

use super::{Object, Schema};

pub fn encode_object(_object: &Object) -> Vec<u8> {
    unimplemented!("catalog codec")
}

pub fn decode_object(_bytes: &[u8]) -> Result<Object, SqlError> {
    Err(super::corrupt_catalog())
}

pub fn encode_schema(_schema: &Schema) -> Vec<u8> {
    unimplemented!("catalog codec")
}

pub fn decode_schema(_bytes: &[u8]) -> Result<Schema, SqlError> {
    Err(super::corrupt_catalog())
}
