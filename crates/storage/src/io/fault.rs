//! Fault injection (being written).
pub struct FaultFs;
