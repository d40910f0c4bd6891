//! [`Connector`](crate::Connector) over TDS, with `tds::client`.
